// Verify mode: runs the graph with and without one planned fusion on random
// inputs (symbolic dims bound to sizes beyond the mask's windows and offsets)
// and measures how far the fused outputs are from the values they replace.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "engine/rewrite/rewrite_plan.h"
#include "ops/kernel.h"
#include "engine/rewrite/subgraph_evaluator.h"

namespace attune {

struct VerifyErrors {
  double max_abs = 0.0;
  double max_rel = 0.0;
  int64_t longest_sequence = 0;  // the largest sequence size compared
  /// Whether NaN and infinities were injected into the plan's float inputs
  /// (at a short size), and the first output where the fused graph then
  /// disagrees in kind (NaN, +inf, -inf, finite) with the original; "" if none.
  bool nonfinite_checked = false;
  std::string nonfinite_mismatch;
};

/// The largest error verify mode accepts in a fused output of this type
/// before it undoes the fusion: 1e-4 for float32; a few units in the last
/// place for half-precision graphs, which round every intermediate of the
/// unfused subgraph where a fused op (computing in float32) rounds once.
double VerifyTolerance(ElementType type);

/// Why verify mode undoes a fusion with these errors in an output of `type`
/// ("verify: ...; fusion undone"), or "" when the fusion holds.
std::string VerifyVerdict(const VerifyErrors& errors, ElementType type);

/// Errors of every replaced value (each float value outside the plan that a
/// planned node reads is fed through Add(value, poison) in both graphs, with
/// a zero poison in these rounds and one NaN or infinity in the non-finite
/// ones); an error status when the comparison cannot run (unknown input shapes, a kernel failure). The sequence dims are drawn
/// at each of `long_lengths` (beyond the replaced mask's windows and constant
/// offsets, so that what a window hides is part of the comparison) and at
/// two short sizes; every size the unfused graph runs at is compared (a mask
/// buffer may stop it at the long ones), and at least one must run.
/// `padding_inputs` name inputs that are key padding masks ([batch, keys],
/// 0 pads): they get ones with a few keys padded at the start of batch 0 and
/// the end of the last batch instead of random values, and their key count,
/// when it is a symbol of its own, follows the keys (past + sequence, or the
/// sequence alone, whichever the unfused graph runs with).
absl::StatusOr<VerifyErrors> VerifyRewritePlan(const Graph& graph, const RewritePlan& plan,
                                              const SubgraphEvaluator& evaluator, const ExecOptions& options,
                                              const std::vector<int64_t>& long_lengths = {},
                                              const std::vector<std::string>& padding_inputs = {});

}  // namespace attune
