#include "importer/fused_matmul_export.h"

#include <numeric>
#include <string>
#include <vector>

namespace attune {
namespace {

constexpr const char* kEpilogueAttributes[] = {"activation", "activation_approximate", "activation_alpha"};

// The product without its epilogue, as the standard op it is: MatMul of A and
// B (transposed when trans_b), or Gemm with the node's Gemm attributes.
// nullptr inputs when B's rank is unknown (no perm can be written).
struct Product {
  std::string op;
  std::vector<Value*> inputs;
  Attributes attributes;
};

bool ProductOf(Graph& graph, const Node& node, Product& product) {
  Value* a = node.input(0);
  Value* b = node.input(1);
  if (a == nullptr || b == nullptr) return false;
  product.attributes = node.attributes();
  for (const char* name : kEpilogueAttributes) product.attributes.Erase(name);
  if (node.op_type() == "FusedGemm") {
    product.op = "Gemm";
    product.inputs = {a, b};
    if (node.num_inputs() > 2 && node.input(2) != nullptr) product.inputs.push_back(node.input(2));
    return true;  // (C is Gemm's own; input 3, the multiplier, is the epilogue's)
  }
  auto trans_b = node.attributes().GetInt("trans_b", 0);
  if (!trans_b.ok()) return false;
  product.attributes.Erase("trans_b");
  product.op = "MatMul";
  Value* operand = b;
  if (*trans_b != 0) {
    if (!b->shape() || b->shape()->size() < 2) return false;
    std::vector<int64_t> perm(b->shape()->size());
    std::iota(perm.begin(), perm.end(), 0);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    SymbolicShape shape = *b->shape();
    std::swap(shape[shape.size() - 1], shape[shape.size() - 2]);
    operand = graph.AddValue(node.name() + "/transposed_b", b->type(), shape);
    Attributes attrs;
    attrs.Set("perm", perm);
    graph.AddNode("Transpose", "", graph.UniqueName(node.name() + "/Transpose"), {b}, {operand}, std::move(attrs));
  }
  product.inputs = {a, operand};
  return true;
}

// The activation op of the epilogue attributes, with its own attributes;
// an empty op when there is none.
std::pair<std::string, Attributes> ActivationOf(const Node& node) {
  const std::string op = node.attributes().GetString("activation", "").value_or("");
  Attributes attrs;
  if (op == "Gelu") attrs.Set("approximate", node.attributes().GetString("activation_approximate", "none").value_or("none"));
  if (op == "Swish") attrs.Set("alpha", node.attributes().GetFloat("activation_alpha", 1.0f).value_or(1.0f));
  return {op, std::move(attrs)};
}

}  // namespace

absl::Status LowerFusedMatMulForOnnx(Graph& graph) {
  for (Node* node : graph.nodes()) {
    if (node->domain() != "attune" || (node->op_type() != "FusedMatMul" && node->op_type() != "FusedGemm")) continue;
    const bool gemm = node->op_type() == "FusedGemm";
    auto input = [&](int i) { return node->num_inputs() > i ? node->input(i) : nullptr; };
    Value* bias = gemm ? nullptr : input(2);
    Value* multiplier = input(3);
    auto [activation, activation_attrs] = ActivationOf(*node);
    Product product;
    if (!ProductOf(graph, *node, product)) continue;
    // The chain product (-> Add bias) (-> activation) (-> Mul multiplier);
    // its last op takes the node's place.
    struct Step {
      std::string op;
      Value* operand;  // the second input, or nullptr
      Attributes attrs;
    };
    std::vector<Step> steps;
    if (bias != nullptr) steps.push_back({"Add", bias, {}});
    if (!activation.empty()) steps.push_back({activation, nullptr, std::move(activation_attrs)});
    if (multiplier != nullptr) steps.push_back({"Mul", multiplier, {}});
    if (steps.empty()) {
      graph.ReplaceNode(node, product.op, "", product.inputs, std::move(product.attributes));
      continue;
    }
    Value* out = node->output(0);
    Value* running = graph.AddValue(node->name() + "/product", out->type(), out->shape());
    graph.AddNode(product.op, "", graph.UniqueName(node->name() + "/" + product.op), product.inputs, {running},
                  std::move(product.attributes));
    for (size_t i = 0; i < steps.size(); ++i) {
      std::vector<Value*> inputs = {running};
      if (steps[i].operand != nullptr) inputs.push_back(steps[i].operand);
      if (i + 1 == steps.size()) {
        graph.ReplaceNode(node, steps[i].op, "", std::move(inputs), std::move(steps[i].attrs));
        break;
      }
      Value* next = graph.AddValue(node->name() + "/" + steps[i].op, out->type(), out->shape());
      graph.AddNode(steps[i].op, "", graph.UniqueName(node->name() + "/" + steps[i].op), std::move(inputs), {next},
                    std::move(steps[i].attrs));
      running = next;
    }
  }
  return absl::OkStatus();
}

}  // namespace attune
