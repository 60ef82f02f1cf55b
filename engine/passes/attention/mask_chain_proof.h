// Proves what a chain of mask steps between the scaled scores and the
// softmax computes (Where(causal, s, min), + (1 - attention_mask) * min,
// Max(s, min), ...), when the chain may read a graph input's values: the
// padding mask most decoder exports combine with the causal one.
//
// The chain is cut out with the scores and that input as its inputs and
// evaluated at the probe sizes, with constant scores (0 and 2^20, so that
// an entry reads as s, s + offset, or a constant the scores do not reach)
// and with padding patterns as the input's values: all ones, left and
// right padding, holes, a fully padded batch, and values other than 0 and 1.
// It is proven when every entry is hidden exactly where the causal part
// (or the window, or nothing) or the padding hides it, and every row whose
// every key is hidden gives its keys constants that depend only on which
// part hides each key (those are the fills the fused op reproduces). One
// more evaluation at NaN scores tells which parts add to a hidden score
// (NaN stays NaN) and which replace it, as the fused op must know.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/attention/half_mask_sweep.h"
#include "engine/passes/attention/probe_plan.h"
#include "engine/rewrite/subgraph_evaluator.h"
#include "ops/kernel.h"

namespace attune::attention {

struct MaskChainRequest {
  const Value* scores = nullptr;  // the chain's input (the scaled scores)
  const Value* masked = nullptr;  // the chain's output (what the softmax reads)
  /// Optional: a position bias the chain adds to the scores (the caller has
  /// checked that it enters through one Add). It is one more input of the
  /// cut, held at 0 in every probe, so what is proven is the chain without
  /// the bias; the fused op adds the bias to the scores itself.
  const Value* bias = nullptr;
  int rank = 4;                   // of the scores
  ProbeDims dims;
};

struct ProvenMaskChain {
  bool open = false;   // the structural part hides nothing
  int64_t window = 0;  // with !open: 0 causal, W a sliding window
  /// The graph input whose zeros hide keys ([batch, keys]), or null.
  const Value* key_padding = nullptr;
  /// Every nonzero value of key_padding shows its key (otherwise only 1 does).
  bool nonzero_shows = false;
  /// A bool key_padding that pads where it is true (PyTorch's key_padding_mask):
  /// the fused op reads Not(key_padding).
  bool padding_true_pads = false;
  /// Which lengths of key_padding the chain takes: kBroadcast when its length
  /// is a symbol of its own and a length of 1 hides every key or none, as the
  /// chain computes it at every probe size; kKeys when only the keys' count
  /// is taken (one symbol for both, or the chain refuses one key).
  mha::KeyPaddingLength padding_length = mha::KeyPaddingLength::kKeys;
  /// Some probe had a row with no visible key; then `fills` holds the
  /// scores such a row's keys get: [causal part only, padding only, both].
  bool hidden_rows = false;
  std::array<float, 3> fills{};
  std::array<bool, 3> fill_seen{};  // which parts such rows showed
  /// Which parts add their fill to the scores there (an additive mask with a
  /// finite fill) rather than replace them: such rows depend on the scores.
  std::array<bool, 3> fill_adds_score{};
  /// Whether a NaN score at a key [the causal part, the padding] hides stays
  /// NaN (the part adds to the score) rather than becoming its fill (Where).
  std::array<bool, 2> keeps_nonfinite{true, true};
  /// Every hidden entry of every probe was -inf or a constant at or below
  /// -2^127 (finfo.min): a fill that no score plus a bias below 2^100 can
  /// reach or move, which a fused position bias relies on.
  bool fills_absorb_bias = true;
  /// The first hidden entry that is not such a fill, as a reason.
  std::string weak_fill;
  /// With a bias: the score every hidden key gets, by the part that hides it
  /// [causal part only, padding only, both], from every probe within the
  /// padding budget (one value per part, or the proof fails); -inf for a part
  /// no probe showed. The fused op computes a row exactly from these when a
  /// bias entry is too large for its fast path.
  std::array<float, 3> part_fills{};
  std::array<bool, 3> part_fill_seen{};
  /// float16 or bfloat16 scores (`score_type`): the chain was read at every
  /// score of that type (half_mask_sweep.h), and `fills` are what it gives
  /// each part there (added to the score in that type where fill_adds_score
  /// says), with half_functions' floors. The fused op must compute rows whose
  /// every key is hidden in that type, as the subgraph rounds them.
  bool half = false;
  ElementType score_type = ElementType::kFloat32;
  HalfMaskFunctions half_functions;
  int probes = 0;
  int64_t longest_constant = 0;
  int64_t longest_probe = 0;
};

/// Proofs already made, by the fingerprint of the cut and the request: the
/// layers of a decoder repeat one mask, so one proof serves them all.
class MaskChainMemo {
 public:
  const absl::StatusOr<ProvenMaskChain>* Find(const std::string& key) const;
  void Add(const std::string& key, absl::StatusOr<ProvenMaskChain> result);

 private:
  std::map<std::string, absl::StatusOr<ProvenMaskChain>> entries_;
};

/// ProvenMaskChain, or FailedPrecondition whose message is the first failing
/// check. With a memo, a cut that computes what an earlier one computed
/// (same fingerprint, same lengths) gets that proof again.
absl::StatusOr<ProvenMaskChain> ProveMaskChain(const Graph& graph, const MaskChainRequest& request,
                                               const SubgraphEvaluator& evaluator, const ExecOptions& options,
                                               MaskChainMemo* memo = nullptr);

}  // namespace attune::attention
