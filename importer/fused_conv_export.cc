#include "importer/fused_conv_export.h"

#include <numeric>
#include <string>
#include <utility>
#include <vector>

namespace attune {
namespace {

// Clip takes its bounds as inputs from this opset on.
constexpr int kClipInputsOpset = 11;
constexpr const char* kFusedAttributes[] = {"activation", "activation_alpha", "activation_beta",
                                            "channels_last_input", "channels_last_output"};

struct Step {
  std::string op;
  std::vector<Value*> operands;  // after the running value
  Attributes attrs;
};

// perm moving the channel axis of a rank-`rank` tensor last (to_last) or back to 1.
std::vector<int64_t> ChannelPerm(size_t rank, bool to_last) {
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  if (to_last) {
    perm.erase(perm.begin() + 1);
    perm.push_back(1);
  } else {
    perm.pop_back();
    perm.insert(perm.begin() + 1, static_cast<int64_t>(rank) - 1);
  }
  return perm;
}

Attributes PermAttrs(std::vector<int64_t> perm) {
  Attributes a;
  a.Set("perm", std::move(perm));
  return a;
}

// The activation of the node as its ONNX op (Clip's bounds as inputs or
// attributes, as the opset has them); empty op for none.
Step ActivationStep(Graph& graph, const Node& node) {
  Step step;
  step.op = node.attributes().GetString("activation", "").value_or("");
  const float alpha = node.attributes().GetFloat("activation_alpha", 0.0f).value_or(0.0f);
  const float beta = node.attributes().GetFloat("activation_beta", 0.0f).value_or(0.0f);
  if (step.op == "LeakyRelu") step.attrs.Set("alpha", alpha);
  if (step.op == "Clip") {
    if (graph.OpsetFor("") >= kClipInputsOpset) {
      step.operands = {graph.AddConstant(graph.UniqueName(node.name() + "/min"), Tensor::Scalar<float>(alpha)),
                       graph.AddConstant(graph.UniqueName(node.name() + "/max"), Tensor::Scalar<float>(beta))};
    } else {
      step.attrs.Set("min", alpha);
      step.attrs.Set("max", beta);
    }
  }
  return step;
}

void Lower(Graph& graph, Node* node) {
  Value* x = node->input(0);
  Value* out = node->output(0);
  const bool x_last = node->attributes().GetInt("channels_last_input", 0).value_or(0) == 1;
  const bool y_last = node->attributes().GetInt("channels_last_output", 0).value_or(0) == 1;
  const size_t rank = x->shape() ? x->shape()->size() : (out->shape() ? out->shape()->size() : 0);
  if ((x_last || y_last) && rank < 3) return;  // no perm can be written; the node stays
  Attributes conv_attrs = node->attributes();
  for (const char* name : kFusedAttributes) conv_attrs.Erase(name);
  std::vector<Step> steps;
  if (x_last) steps.push_back({"Transpose", {}, PermAttrs(ChannelPerm(rank, false))});
  std::vector<Value*> weights = {node->input(1)};
  if (node->num_inputs() > 2) weights.push_back(node->input(2));  // B, possibly omitted
  steps.push_back({"Conv", weights, std::move(conv_attrs)});
  if (y_last) steps.push_back({"Transpose", {}, PermAttrs(ChannelPerm(rank, true))});
  if (node->num_inputs() > 3 && node->input(3) != nullptr) steps.push_back({"Add", {node->input(3)}, {}});
  Step activation = ActivationStep(graph, *node);
  if (!activation.op.empty()) steps.push_back(std::move(activation));
  Value* running = x;
  for (size_t i = 0; i < steps.size(); ++i) {
    std::vector<Value*> inputs = {running};
    inputs.insert(inputs.end(), steps[i].operands.begin(), steps[i].operands.end());
    if (steps[i].op == "Conv" && inputs.size() == 3 && inputs[2] == nullptr) inputs.pop_back();
    if (i + 1 == steps.size()) {
      graph.ReplaceNode(node, steps[i].op, "", std::move(inputs), std::move(steps[i].attrs));
      return;
    }
    // Shapes are left to the reader; types are known.
    Value* next = graph.AddValue(graph.UniqueName(node->name() + "/" + steps[i].op), out->type());
    graph.AddNode(steps[i].op, "", graph.UniqueName(node->name() + "/" + steps[i].op), std::move(inputs), {next},
                  std::move(steps[i].attrs));
    running = next;
  }
}

}  // namespace

absl::Status LowerFusedConvForOnnx(Graph& graph) {
  for (Node* node : graph.nodes())
    if (node->domain() == "attune" && node->op_type() == "FusedConv" && node->num_inputs() >= 2 &&
        node->input(0) != nullptr && node->input(1) != nullptr)
      Lower(graph, node);
  return absl::OkStatus();
}

}  // namespace attune
