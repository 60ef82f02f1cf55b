#include "core/validate/validate_graph.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/ir/opset.h"
#include "core/validate/node_checks.h"
#include "core/validate/op_arity.h"

namespace attune {
namespace {

std::string Counted(int n, const char* noun) { return absl::StrCat(n, " ", noun, n == 1 ? "" : "s"); }

// "1 input", "2 to 5 inputs", "at least 1 input".
std::string CountRange(int min, int max, const char* noun) {
  if (max == kVariadic) return absl::StrCat("at least ", Counted(min, noun));
  if (min == max) return Counted(min, noun);
  return absl::StrCat(min, " to ", Counted(max, noun));
}

absl::Status CheckArity(const Node& node, const OpArity& a, int opset) {
  const auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": ", what));
  };
  // A control-flow node's last inputs are the outer values its subgraphs read.
  const int outer = node.has_subgraphs() ? node.subgraphs()[0].second->outer_scope_inputs : 0;
  const int own_inputs = node.num_inputs() - outer;
  if (own_inputs < a.min_inputs || own_inputs > a.max_inputs)
    return bad(absl::StrCat("has ", Counted(own_inputs, "input"), "; the op takes ",
                            CountRange(a.min_inputs, a.max_inputs, "input"), " at opset ", opset));
  if (node.num_outputs() < a.min_outputs || node.num_outputs() > a.max_outputs)
    return bad(absl::StrCat("has ", Counted(node.num_outputs(), "output"), "; the op gives ",
                            CountRange(a.min_outputs, a.max_outputs, "output"), " at opset ", opset));
  // Control-flow nodes (If, Loop, Scan) check which of their inputs may be
  // omitted themselves: Loop's M and cond may be, its loop-carried values not.
  for (int i = 0; i < node.num_inputs() && !node.has_subgraphs(); ++i) {
    if (node.input(i) != nullptr) continue;
    if (i < a.min_inputs) return bad(absl::StrCat("input ", i, " is required but omitted"));
    if (a.max_inputs == kVariadic) return bad(absl::StrCat("input ", i, " of a variadic list is omitted"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateGraph(const Graph& graph) {
  for (const Node* node : graph.nodes()) {
    const int opset = KernelOpsetFor(graph, *node);
    if (const OpArity* arity = FindOpArity(node->domain(), node->op_type(), opset))
      RETURN_IF_ERROR(CheckArity(*node, *arity, opset));
    RETURN_IF_ERROR(validate::CheckNodeAttributes(*node, opset));
  }
  return absl::OkStatus();
}

}  // namespace attune
