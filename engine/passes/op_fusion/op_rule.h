// An op fusion rule: a small subgraph (an activation, a norm) that is proven
// to compute one standard op, found from a node only that subgraph has
// (Tanh, Erf, Sigmoid, ReduceMean, or an activation folded into the product
// it reads). Rules are data for one pass driver
// (engine/passes/op_fusion_pass.cc): a pattern, a check that returns the
// first failing reason, a rewrite.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attune/fusion_report.h"
#include "core/ir/graph.h"
#include "engine/pattern/pattern.h"
#include "engine/rewrite/rewrite_plan.h"

namespace attune::op_fusion {

/// The capture every rule's pattern binds to its anchor node, so that a match
/// found from one anchor is known to contain it.
inline constexpr char kAnchor[] = "anchor";

/// A rewrite ready to apply, and its report entry (the pass fills in the new
/// node's name and the replaced nodes).
struct OpRewrite {
  RewritePlan plan;
  OpFusionRecord record;
  ElementType type = ElementType::kUndefined;  // of the fused output: verify mode's tolerance
};

struct OpRule {
  /// The report's pattern name ("gelu_tanh").
  std::string name;
  /// Op types (default domain) a candidate starts from.
  std::vector<std::string> anchor_ops;
  /// Matched at the outputs of an anchor's readers: an anchor for which it
  /// matches is a candidate, whose miss the report explains; other anchors
  /// (a Tanh that is not part of a GELU) are passed over in silence.
  pattern::Pattern near;
  /// Readers between the anchor and the subgraph's output, at least (0: the
  /// anchor's own output may be it, and `near` is matched there too) and at most.
  int min_depth = 1;
  int max_depth = 1;
  /// The subgraph, matched at its output.
  pattern::Pattern pattern;
  /// Captured nodes whose outputs the fused op produces as well (a residual
  /// sum read further on): they may be read outside the subgraph.
  std::vector<std::string> kept_nodes;
  /// The first reason a structural match must not be fused, or nullopt
  /// (the pass checks on its own that no intermediate is read outside).
  std::function<std::optional<std::string>(const Graph&, const pattern::Match&)> check;
  /// The rewrite of a checked match whose output is `root`.
  std::function<OpRewrite(const Graph&, const pattern::Match&, const Value& root)> rewrite;
};

}  // namespace attune::op_fusion
