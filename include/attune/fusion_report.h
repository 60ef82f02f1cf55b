// What the optimiser did to a graph: every fusion, every rejected candidate.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace attune {

/// One fused attention (or other fused op) and what it replaced.
struct FusionRecord {
  std::string op;                     // the fused op's type, e.g. "MultiHeadAttention"
  std::string node;                   // the new node's name
  std::string pattern;                // the rule that matched
  std::vector<std::string> replaced;  // names of the nodes it replaced
  int64_t num_heads = 0;
  int64_t kv_num_heads = 0;
  int64_t head_dim = 0;
  float scale = 0.0f;
  bool causal = false;
  int64_t window = 0;         // 0 = unlimited
  /// How keys are masked: a name of the fused op's MaskKind (the schema in
  /// core/schema/multi_head_attention.h writes every value here): "none",
  /// "causal", "window", "explicit", or with a key padding input "padding",
  /// "causal+padding", "window+padding"; with a position bias as well, the
  /// same followed by "+bias" ("causal+padding+bias"), or "bias" alone.
  std::string mask;
  /// What a query row whose every key is hidden outputs, as the replaced
  /// subgraph does: a name of the schema's MaskedRows, the op's masked_rows
  /// attribute: "nan" (softmax of -inf), "uniform" (the mean of V: softmax of
  /// equal finite fills) or "fills" (softmax of the scores the subgraph gives
  /// hidden keys, by which part hides each). Empty when no row can be fully
  /// hidden (the op's default, "zeros", is never reported).
  std::string masked_rows;
  /// With a padding mask: the graph input it is read from (0 pads a key).
  std::string key_padding;
  /// With a position bias (ALiBi, T5's relative bias; `mask` then ends in
  /// "+bias", or is "bias" alone): the value the fused op adds to the scores.
  std::string bias;
  /// With an attention sink: the constant of per-head logits the subgraph
  /// concatenated after the keys (the fused op's sinks input holds its values).
  std::string sinks;
  /// With the probabilities also read outside the block (attention weights,
  /// nn.MultiheadAttention's need_weights=True): the value the subgraph's
  /// Softmax gave them, which the fused op's probabilities output replaces.
  std::string weights;
  /// > 0: the model's mask is computed from a buffer of this many positions,
  /// and the fused op refuses more keys (past + new), as the model does.
  int64_t max_kv_len = 0;
  std::string q_layout;       // "BHTD" or "BTC"
  bool has_past = false;
  /// Set by verify mode: max errors of the fused op against the original subgraph.
  std::optional<double> verify_max_abs_error;
  std::optional<double> verify_max_rel_error;
  bool undone = false;        // verify mode undid it (error above tolerance)
};

/// An activation or a norm written as one standard op (Gelu, Swish,
/// RMSNormalization) in place of the subgraph that computed it.
struct OpFusionRecord {
  std::string op;                     // the fused op's type, e.g. "Gelu"
  std::string node;                   // the new node's name
  std::string pattern;                // the rule that matched: "gelu_tanh", "gelu_erf", "swish", "rms_norm"
  std::string attributes;             // the fused op's attributes in words, e.g. "approximate=tanh"
  std::vector<std::string> replaced;  // names of the nodes it replaced
  /// Set by verify mode: max errors of the fused op against the original subgraph.
  std::optional<double> verify_max_abs_error;
  std::optional<double> verify_max_rel_error;
  bool undone = false;  // verify mode undid it (error above tolerance)
};

/// A candidate that a fusion rule looked at and declined.
struct RejectedCandidate {
  std::string at;       // node name where the match was anchored
  std::string pattern;  // the rule
  std::string reason;   // the first check that failed
};

/// A pipeline stage whose passes still changed the graph in the last round
/// its cap allows (a stage repeats its passes until none changes anything).
struct IterationCapHit {
  std::string stage;  // "simplify", "fuse", ...
  int rounds = 0;     // the cap: rounds run
};

/// The optimiser's account of one model: op counts before and after, fusions, rejections.
struct FusionReport {
  std::map<std::string, int> ops_before;  // op type -> count, before the passes
  std::map<std::string, int> ops_after;   // after
  std::vector<FusionRecord> fusions;        // attention
  std::vector<OpFusionRecord> op_fusions;   // activations and norms
  std::vector<RejectedCandidate> rejected;  // by every fusion rule
  std::vector<std::string> passes_run;    // pass names in the order they ran
  /// Stages that stopped at their round cap without reaching a fixed point.
  std::vector<IterationCapHit> iteration_cap_hit;
  /// Relations between input dims the graph was optimised under, each with
  /// its reason ("attention_mask dim 1 (total_seq) = past_seq+seq: ...").
  /// Every run checks them; a run that breaks one runs the graph optimised
  /// without them.
  std::vector<std::string> assumptions;
  /// The pass the pipeline stopped after (SessionOptions::stop_after_pass); empty when every pass ran.
  std::string stopped_after;
};

}  // namespace attune
