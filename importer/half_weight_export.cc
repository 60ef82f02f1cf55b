#include "importer/half_weight_export.h"

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/half_weight_matmul.h"

namespace attune {
namespace {

// W as the graph holds it, or as its holder restores it.
absl::StatusOr<Tensor> WeightTensor(const Value& w) {
  if (w.constant() != nullptr) return *w.constant();
  if (w.constant_holder() != nullptr) return w.constant_holder()->Restore();
  return absl::InvalidArgumentError(absl::StrCat("weight '", w.name(), "' of a HalfWeightMatMul is not a constant"));
}

bool KeepsFloatActivations(const Node& node, const Value& w) {
  auto level = node.attributes().GetInt(halfw::kAccuracyLevel, halfw::kFloat32Activations);
  return w.type() == ElementType::kFloat16 || (level.ok() && *level <= halfw::kFloat32Activations);
}

absl::Status LowerOne(Graph& graph, Node* node) {
  const std::string base = node->name().empty() ? std::string("half_weight_product") : node->name();
  Value* a = node->input(halfw::kInputA);
  const Value* w = node->input(halfw::kInputW);
  Value* bias = node->num_inputs() > halfw::kInputBias ? node->input(halfw::kInputBias) : nullptr;
  ASSIGN_OR_RETURN(Tensor given, WeightTensor(*w));
  if (given.rank() != 2 || ElementSize(given.type()) != 2)
    return absl::InvalidArgumentError(absl::StrCat(node->Describe(), ": weight '", w->name(), "' is ",
                                                   given.DebugString(), "; expected a 16-bit [N, K] tensor"));
  const int64_t n = given.shape()[0], k = given.shape()[1];
  ASSIGN_OR_RETURN(Tensor transposed, Tensor::CreateUninitialized(given.type(), {k, n}));
  const uint16_t* src = static_cast<const uint16_t*>(given.raw_data());
  uint16_t* dst = static_cast<uint16_t*>(transposed.raw_data());
  for (int64_t j = 0; j < n; ++j)
    for (int64_t kk = 0; kk < k; ++kk) dst[kk * n + j] = src[j * k + kk];
  Value* wt = graph.AddConstant(graph.UniqueName(absl::StrCat(w->name(), "_t")), std::move(transposed));
  Value* widened = graph.AddValue(absl::StrCat(base, "/weight_float"), ElementType::kFloat32, SymbolicShape{Dim::Known(k), Dim::Known(n)});
  Attributes to_float;
  to_float.Set("to", static_cast<int64_t>(ElementType::kFloat32));
  graph.AddNode("Cast", "", graph.UniqueName(absl::StrCat(base, "/Cast")), {wt}, {widened}, std::move(to_float));
  if (bias == nullptr) {
    graph.ReplaceNode(node, "MatMul", "", {a, widened});
    return absl::OkStatus();
  }
  Value* product = graph.AddValue(absl::StrCat(base, "/product"), ElementType::kFloat32, node->output(0)->shape());
  graph.AddNode("MatMul", "", graph.UniqueName(absl::StrCat(base, "/MatMul")), {a, widened}, {product});
  graph.ReplaceNode(node, "Add", "", {product, bias});
  return absl::OkStatus();
}

}  // namespace

absl::Status LowerHalfWeightProductsForOnnx(Graph& graph) {
  std::vector<Node*> products;
  for (Node* node : graph.nodes())
    if (node->domain() == halfw::kDomain && node->op_type() == halfw::kOpType && node->num_inputs() >= 2 &&
        node->input(halfw::kInputA) != nullptr && node->input(halfw::kInputW) != nullptr &&
        KeepsFloatActivations(*node, *node->input(halfw::kInputW)))
      products.push_back(node);
  for (Node* node : products) RETURN_IF_ERROR(LowerOne(graph, node));
  bool attune_left = false;
  for (const Node* node : graph.nodes()) attune_left |= node->domain() == halfw::kDomain;
  if (!products.empty() && !attune_left) graph.RemoveOpset(halfw::kDomain);
  return absl::OkStatus();
}

}  // namespace attune
