// The stages of the attention rule, in the order CheckAttention runs them on
// a structural match. Each stage reads the match (and what the stages before
// it decided) and returns its decision or the first check that failed, which
// becomes the fusion report's reason:
//
//   1. structure   CheckStructure    rank, softmax axis, MatMul broadcasts, a
//                                    view of the masked scores, no value of the
//                                    match read outside it            (attention_rule.cc)
//   2. scale       DecideScale       the constant factors on Q, K and the scores,
//                                    a softcap                         (attention_rule.cc)
//   3. operands    DecideOperands    Q, K, V as the fused op reads them: layout,
//                                    heads, KV cache, repeats, types   (attention_rule.cc)
//                  DecideScoreLimit  where float16 scores overflow
//                  CheckOperandTypes K, V and the output in Q's type, heads that group
//   4. mask        DecideMask        causal, window, padding, bias or an explicit
//                                    mask, proven by evaluation        (mask_decision.cc)
//                  FinishMask        what fully hidden rows give, with what the
//                                    scale and the scores' type make of them
//                  DecideSinks       an attention sink: a per-head logit column
//                                    concatenated to the scores, sliced off after
//                                    the softmax                      (sink_stage.cc)
//                  DecideWeights,    the probabilities also read outside the block
//                  CheckWeights      (attention weights): the fused op's output 3
//                                                                     (weights_stage.cc)
//   5. plan        PlanFusedNode     the layout the fused node reads, the node,
//                                    its report entry                  (fused_node_plan.cc)
//
// A new form is a new rule inside the stage it belongs to (an operand walk,
// a mask reading, a layout), not a branch of CheckAttention.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/ir/graph.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/attention/attention_patterns.h"
#include "engine/passes/attention/attention_rule.h"
#include "engine/passes/attention/operands.h"
#include "engine/passes/pass.h"
#include "engine/pattern/match.h"

namespace attune::attention {

using Reason = std::string;

inline std::string Quote(const Value* v) { return absl::StrCat("'", v->name(), "'"); }

/// Stage 1: the rank of the scores (3: one head, 4: batch, heads, queries,
/// keys) once the matched structure is one the fused op computes.
std::variant<int, Reason> CheckStructure(const Graph& graph, const pattern::Match& m);

/// Stage 2: the scale and softcap; later stages add what the scores' type needs.
struct ScaleDecision {
  double scale = 1.0;  // the product of every constant factor on Q, K and the scores
  std::optional<double> softcap;
  /// float16 scores: |Q·K| (before `scale`) at which the subgraph's scores become +-inf.
  std::optional<double> score_limit;
  /// 16-bit scores with every-key-hidden rows: the divisor the subgraph divides them by.
  std::optional<double> score_divisor;
};
std::variant<ScaleDecision, Reason> DecideScale(const pattern::Match& m, const AttentionVariant& variant);

/// Stage 3: Q, K and V as the fused op reads them.
struct Operands {
  HeadOperand q, k, v;
  /// Why K and V were read without a repeat or a KV cache the walk found for one of them.
  std::vector<std::string> notes;
  ElementType type = ElementType::kUndefined;  // Q's, which K, V and the output share
};
std::variant<Operands, Reason> DecideOperands(const pattern::Match& m, int rank);
/// float16 scores overflow where |Q·K| times the factors reaches 65520: sets `scale.score_limit`.
std::optional<Reason> DecideScoreLimit(const pattern::Match& m, ElementType type, ScaleDecision& scale);
/// K, V and the output have Q's type; the heads of Q, K and V group.
std::optional<Reason> CheckOperandTypes(const pattern::Match& m, int rank, const Operands& ops);

/// Stage 4: how the fused op masks keys.
struct MaskDecision {
  mha::MaskKind kind = mha::MaskKind::kNone;
  bool causal = false;  // the fused op's causal attribute (causal or window)
  int64_t window = 0;
  std::string attn_mask;  // value reference for an explicit mask
  /// What a row whose every key the mask hides gives in the subgraph (NaN:
  /// softmax of -inf scores; uniform: of equal finite fills); none when no
  /// row can be fully hidden.
  std::optional<mha::MaskedRows> masked_rows;
  std::optional<Reason> not_causal;
  /// The longest length the mask's constants (windows, offsets) reach: verify mode runs beyond it.
  int64_t longest_constant = 0;
  /// > 0: the mask's buffer covers this many keys and the model no more (the fused op's max_kv_len).
  int64_t max_kv_len = 0;
  /// The graph input whose zeros pad keys, and which of its values the proof covers.
  std::string key_padding;
  mha::KeyPaddingValues key_padding_values = mha::KeyPaddingValues::kBinary;
  /// A bool key_padding that pads where true (this input): the fused op reads its negation.
  const Value* key_padding_true_pads = nullptr;
  mha::KeyPaddingLength key_padding_length = mha::KeyPaddingLength::kKeys;
  /// With MaskedRows::kFills: the scores a row with no visible key gives its
  /// keys [hidden by the causal part only, by the padding only, by both], and
  /// which of them are added to the key's score rather than replace it.
  std::vector<float> hidden_fills;
  std::vector<int64_t> hidden_fills_add_scores;
  /// Whether a NaN or +inf score at a key [the causal or window part, the
  /// explicit mask or the padding] hides still reaches the softmax: an
  /// additive mask keeps it, Where replaces it (the fused op's hidden_nonfinite).
  std::array<bool, 2> hidden_nonfinite{true, true};
  /// 16-bit scores whose mask chain was read at every score
  /// (ProvenMaskChain::half): rows whose every key is hidden are computed in
  /// `score_type`, each key's masked score clamped at its floor [visible,
  /// causal, padding, both].
  bool half = false;
  ElementType score_type = ElementType::kFloat32;
  std::vector<float> score_floors;
  /// The graph inputs an explicit mask reads the values of (verify mode sizes
  /// them as padding: one entry per key).
  std::vector<std::string> inputs_read;
  /// A position bias added to the scores next to the masks (input 3 with
  /// position_bias = 1 or 2): the value it is.
  std::string bias;
  bool bias_into_mask = false;  // scores + (bias + mask) rather than (scores + bias) + mask
  /// Where(IsNaN(p), 0, p) after the softmax: rows the subgraph makes NaN give zero weights.
  bool nan_guard = false;
  /// With MaskedRows::kUniform: the one finite fill such rows softmax, where known.
  std::optional<double> uniform_fill;
};

class MaskChainMemo;

/// The mask the match's mask steps prove (`plan` receives the nodes an
/// explicit mask needs), or why none fits.
std::variant<MaskDecision, Reason> DecideMask(const Graph& graph, const pattern::Match& m, const AttentionVariant& v,
                                              const HeadOperand& k, const Node& scores, int rank,
                                              const PassContext& ctx, RewritePlan& plan, MaskChainMemo* memo);
/// What rows with no visible key give once the scale and the scores' type
/// are known (float16 overflow, a NaN guard, 16-bit rows computed from Q·K).
std::optional<Reason> FinishMask(const pattern::Match& m, const AttentionVariant& variant, ScaleDecision& scale,
                                 MaskDecision& mask);

/// Stage 4b: an attention sink (sink_stage.cc): a column of one learned
/// logit per head concatenated after the keys and sliced off after the
/// softmax. No sink: empty logits. With one, rows whose every key is hidden
/// become the fills policy (the sink takes part in their softmax).
struct SinkDecision {
  std::vector<float> logits;  // per query head
  std::string source;         // the constant the subgraph's sink column holds (for the report)
};
std::variant<SinkDecision, Reason> DecideSinks(const pattern::Match& m, const AttentionVariant& variant, int rank,
                                               const Operands& ops, MaskDecision& mask);

/// Stage 1b (right after the structure) and 4c: the attention weights
/// (weights_stage.cc). The Softmax's probabilities read outside the block
/// (need_weights=True) become the fused op's output 3, which must be exactly
/// what the Softmax gave: P·V reads the Softmax itself, the scores are 4-D
/// (B, H, T, S); float32, no cache, sink, position bias, 16-bit scores or Where
/// mask, whose rows the row-by-row path that writes them does not model.
struct WeightsDecision {
  const Value* probabilities = nullptr;  // the Softmax's output, when read outside the block
  /// It and the Identity copies of it P·V reads that are read outside the
  /// block or are graph outputs: each is replaced by the probabilities output.
  std::vector<const Value*> read_outside;
  std::string readers;                   // who reads it there (for reasons)
};
std::variant<WeightsDecision, Reason> DecideWeights(const pattern::Match& m, int rank);
/// The Softmax and the Identity nodes between it and P·V: the nodes whose
/// outputs stage 1 lets be read outside, for DecideWeights to decide.
std::vector<const Node*> ProbabilityNodes(const pattern::Match& m);
std::optional<Reason> CheckWeights(const WeightsDecision& weights, const Operands& ops, const MaskDecision& mask,
                                   const SinkDecision& sinks);

/// Stage 5: the rewrite: the fused node on the operands in the layout it
/// reads them, and its report entry.
AttentionRewrite PlanFusedNode(const pattern::Match& m, const AttentionVariant& variant, int rank,
                               const Operands& ops, ScaleDecision scale, MaskDecision mask, RewritePlan plan,
                               const SinkDecision& sinks, const WeightsDecision& weights);

}  // namespace attune::attention
