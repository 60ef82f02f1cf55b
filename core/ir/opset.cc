#include "core/ir/opset.h"

namespace attune {

int KernelOpsetFor(const Graph& graph, const Node& node) {
  const int opset = graph.OpsetFor(node.domain());
  return node.domain() != "" && opset == 0 ? 1 : opset;
}

}  // namespace attune
