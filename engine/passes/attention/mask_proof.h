// Proves that an attention mask is causal (or a causal sliding window) by
// evaluating the subgraph that computes it at several probe sizes and
// comparing every entry with the bottom-right-aligned causal mask. The probe
// lengths come from the subgraph's own constants (probe_lengths.h), so a
// window or offset is always probed beyond its reach.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/rewrite/subgraph_evaluator.h"
#include "ops/kernel.h"

namespace attune::attention {

/// How the mask tensor's entries say "this key is hidden".
enum class MaskReading {
  kBlockedWhereTrue,   // Where(cond, fill, scores): cond true hides
  kBlockedWhereFalse,  // Where(cond, scores, fill): cond false hides
  kAdditive,           // Add(scores, mask): 0 is open, <= -1e4 or -inf hides
};

struct MaskProofRequest {
  const Value* mask = nullptr;
  MaskReading reading = MaskReading::kBlockedWhereTrue;
  Dim q_len;                     // the scores' query dim
  Dim kv_len;                    // the scores' key dim (past + new keys)
  std::optional<Dim> past_len;   // the past keys' length dim, when the attention has a KV cache
};

struct ProvenMask {
  /// Every entry open at every probe: the mask hides nothing and can be dropped.
  bool open = false;
  int64_t window = 0;  // 0: plain causal; W: a query also does not see keys W or more before it
  int probes = 0;      // how many probe sizes were evaluated
  /// The largest constant of the mask subgraph (a window, an offset, a buffer
  /// length); verify mode draws its inputs longer than this.
  int64_t longest_constant = 0;
  int64_t longest_probe = 0;  // the most keys (past + queries) any probe evaluated
  /// > 0: the mask is sliced from a buffer of this many positions and its
  /// subgraph fails one key beyond it, as the model does: the longest input
  /// the proof must cover and the fused op may take.
  int64_t max_kv_len = 0;
};

/// ProvenMask (causal, windowed or fully open), or FailedPrecondition whose message is the first failing check
/// ("mask depends on input values ('x')", "mask differs from causal at T=16 row 9 col 3", ...).
absl::StatusOr<ProvenMask> ProveCausalMask(const Graph& graph, const MaskProofRequest& request,
                                           const SubgraphEvaluator& evaluator, const ExecOptions& options);

}  // namespace attune::attention
