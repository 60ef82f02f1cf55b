#include "importer/dynamic_int8_export.h"

#include <string>
#include <vector>

namespace attune {
namespace {

// DynamicQuantizeLinear arrives with opset 11.
constexpr int kDynamicQuantizeOpset = 11;

void LowerOne(Graph& graph, Node* node) {
  const std::string base = node->name();
  Value* a = node->input(0);
  Value* b = node->input(1);
  Value* b_scale = node->input(2);
  Value* b_zp = node->num_inputs() > 3 ? node->input(3) : nullptr;
  Value* bias = node->num_inputs() > 4 ? node->input(4) : nullptr;
  const auto& a_shape = a->shape();
  auto value = [&](const std::string& suffix, ElementType type, std::optional<SymbolicShape> shape) {
    return graph.AddValue(base + suffix, type, std::move(shape));
  };
  auto add = [&](const std::string& op, std::vector<Value*> in, std::vector<Value*> out, Attributes attrs = {}) {
    graph.AddNode(op, "", graph.UniqueName(base + "/" + op), std::move(in), std::move(out), std::move(attrs));
  };
  Value* q = value("/quantized", ElementType::kUint8, a_shape);
  Value* s = value("/scale", ElementType::kFloat32, SymbolicShape{});
  Value* z = value("/zero_point", ElementType::kUint8, SymbolicShape{});
  add("DynamicQuantizeLinear", {a}, {q, s, z});
  const auto& y_shape = node->output(0)->shape();
  Value* acc = value("/output_quantized", ElementType::kInt32, y_shape);
  std::vector<Value*> product_inputs = {q, b, z};
  if (b_zp != nullptr) product_inputs.push_back(b_zp);
  add("MatMulInteger", std::move(product_inputs), {acc});
  Value* as_float = value("/output_quantized_cast_output", ElementType::kFloat32, y_shape);
  Attributes to_float;
  to_float.Set("to", static_cast<int64_t>(ElementType::kFloat32));
  add("Cast", {acc}, {as_float}, std::move(to_float));
  Value* scales = value("/scales_mul", ElementType::kFloat32, b_scale->shape());
  add("Mul", {s, b_scale}, {scales});
  if (bias == nullptr) {
    graph.ReplaceNode(node, "Mul", "", {as_float, scales});
    return;
  }
  Value* scaled = value("/output_scale_mul", ElementType::kFloat32, y_shape);
  add("Mul", {as_float, scales}, {scaled});
  graph.ReplaceNode(node, "Add", "", {scaled, bias});
}

}  // namespace

absl::Status LowerDynamicInt8ProductsForOnnx(Graph& graph) {
  bool lowered = false;
  for (Node* node : graph.nodes())
    if (node->domain() == "attune" && node->op_type() == "DynamicQuantizeMatMul" && node->num_inputs() >= 3 &&
        node->input(0) != nullptr && node->input(1) != nullptr && node->input(2) != nullptr) {
      LowerOne(graph, node);
      lowered = true;
    }
  if (lowered && graph.OpsetFor("") < kDynamicQuantizeOpset) graph.SetOpset("", kDynamicQuantizeOpset);
  return absl::OkStatus();
}

}  // namespace attune
