#include "engine/passes/graph_edits.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace attune {

absl::Status ReplaceNodeWithConstants(Graph& graph, Node* node, std::vector<Tensor> tensors) {
  if (static_cast<int>(tensors.size()) != node->num_outputs())
    return absl::InternalError(absl::StrCat("ReplaceNodeWithConstants: ", tensors.size(), " tensors for ",
                                            node->num_outputs(), " outputs of ", node->Describe()));
  // Graph::RemoveNode wants unused outputs: park the uses on placeholders while
  // the node goes, then hand them back to the (now constant) outputs. The
  // placeholders end up with no uses and are dropped by RemoveDeadNodes.
  std::vector<Value*> outputs = node->outputs();
  std::vector<Value*> parked(outputs.size(), nullptr);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] == nullptr) continue;
    parked[i] = graph.AddValue(absl::StrCat(outputs[i]->name(), "__parked"));
    graph.ReplaceAllUsesWith(outputs[i], parked[i]);
  }
  absl::Status removed = graph.RemoveNode(node);
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i] == nullptr) continue;
    graph.ReplaceAllUsesWith(parked[i], outputs[i]);
    if (removed.ok()) graph.SetConstant(outputs[i], std::move(tensors[i]));
  }
  return removed;
}

Tensor Int64Vector(const std::vector<int64_t>& values) {
  return *Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values);
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  if (a.type() != b.type() || a.shape() != b.shape()) return false;
  if (a.byte_size() == 0 || a.raw_data() == b.raw_data()) return true;
  return std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

void ReplaceOutputWith(Graph& graph, Node* node, Value* replacement) {
  Value* out = node->output(0);
  if (out->is_graph_output()) {
    graph.ReplaceNode(node, "Identity", "", {replacement});
  } else {
    graph.ReplaceAllUsesWith(out, replacement);
  }
}

}  // namespace attune
