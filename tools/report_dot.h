// The optimised graph as Graphviz DOT, with fused attention highlighted.
#pragma once

#include <string>

#include "attune/fusion_report.h"
#include "core/ir/graph.h"

namespace attune::cli {

struct DotOptions {
  /// Show every node and constant; by default shape computations are folded
  /// into one summary box per consumer and repeated identical layers into one box.
  bool show_all = false;
  /// The graph's caption (e.g. the model path).
  std::string title;
};

/// One statement per line: `id [attrs];` or `a -> b [attrs];`. Node ids start
/// with what they are: input_, output_, op_, fused_, const_, shape_, layers_.
std::string RenderDot(const Graph& graph, const FusionReport& report, const DotOptions& options);

}  // namespace attune::cli
