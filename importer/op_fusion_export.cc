#include "importer/op_fusion_export.h"

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

namespace attune {
namespace {

constexpr int kGeluOpset = 20;
constexpr int kRmsNormalizationOpset = 23;
constexpr int kSwishOpset = 24;
// ReduceMean takes its axes as an input from this opset on.
constexpr int kReduceAxesInputOpset = 18;

Attributes CastTo(ElementType type) {
  Attributes a;
  a.Set("to", static_cast<int64_t>(type));
  return a;
}

// Adds nodes after one fused node, named after it.
class Writer {
 public:
  Writer(Graph& graph, const Node& node) : graph_(graph), base_(node.name()) {}

  Value* Scalar(ElementType type, double v) {
    Tensor t;
    switch (type) {
      case ElementType::kFloat16: t = Tensor::Scalar<Float16>(FloatToHalf(static_cast<float>(v))); break;
      case ElementType::kBFloat16: t = Tensor::Scalar<BFloat16>(FloatToBFloat16(static_cast<float>(v))); break;
      case ElementType::kFloat64: t = Tensor::Scalar<double>(v); break;
      default: t = Tensor::Scalar<float>(static_cast<float>(v)); break;
    }
    return graph_.AddConstant(graph_.UniqueName(base_ + "/c"), std::move(t));
  }

  Value* Op(const std::string& op, std::vector<Value*> inputs, ElementType type,
            const std::optional<SymbolicShape>& shape, Attributes attrs = {}) {
    Value* out = graph_.AddValue(base_ + "/" + op + "_out", type, shape);
    graph_.AddNode(op, "", graph_.UniqueName(base_ + "/" + op), std::move(inputs), {out}, std::move(attrs));
    return out;
  }

 private:
  Graph& graph_;
  std::string base_;
};

// ½x · (1 + f(argument)); the last product takes the node's place.
void LowerGelu(Graph& graph, Node* node) {
  Value* x = node->input(0);
  const ElementType t = x->type();
  const auto& shape = x->shape();
  const bool tanh = node->attributes().GetString("approximate", "none").value_or("none") == "tanh";
  Writer w(graph, *node);
  Value* f;
  if (tanh) {
    Value* cube = w.Op("Pow", {x, w.Scalar(t, 3.0)}, t, shape);
    Value* inner = w.Op("Add", {x, w.Op("Mul", {cube, w.Scalar(t, 0.044715)}, t, shape)}, t, shape);
    const double k = std::numbers::sqrt2 * std::numbers::inv_sqrtpi;
    f = w.Op("Tanh", {w.Op("Mul", {inner, w.Scalar(t, k)}, t, shape)}, t, shape);
  } else {
    f = w.Op("Erf", {w.Op("Mul", {x, w.Scalar(t, 1.0 / std::numbers::sqrt2)}, t, shape)}, t, shape);
  }
  Value* half_x = w.Op("Mul", {x, w.Scalar(t, 0.5)}, t, shape);
  Value* bracket = w.Op("Add", {f, w.Scalar(t, 1.0)}, t, shape);
  graph.ReplaceNode(node, "Mul", "", {half_x, bracket});
}

void LowerSwish(Graph& graph, Node* node) {
  Value* x = node->input(0);
  const float alpha = node->attributes().GetFloat("alpha", 1.0f).value_or(1.0f);
  Writer w(graph, *node);
  Value* arg = alpha == 1.0f ? x : w.Op("Mul", {x, w.Scalar(x->type(), alpha)}, x->type(), x->shape());
  graph.ReplaceNode(node, "Mul", "", {x, w.Op("Sigmoid", {arg}, x->type(), x->shape())});
}

void LowerRmsNorm(Graph& graph, Node* node) {
  Value* x = node->input(0);
  Value* scale = node->input(1);
  const int64_t axis = node->attributes().GetInt("axis", -1).value_or(-1);
  const int64_t stash = node->attributes().GetInt("stash_type", 1).value_or(1);
  const bool last = axis == -1 || (x->shape() && axis == static_cast<int64_t>(x->shape()->size()) - 1);
  if (!last || stash != static_cast<int64_t>(ElementType::kFloat32) || scale == nullptr) return;
  const float epsilon = node->attributes().GetFloat("epsilon", 1e-5f).value_or(1e-5f);
  const ElementType f32 = ElementType::kFloat32;
  Writer w(graph, *node);
  const bool widen = x->type() != f32;
  Value* xf = widen ? w.Op("Cast", {x}, f32, x->shape(), CastTo(f32)) : x;
  std::optional<SymbolicShape> stat_shape = x->shape();
  if (stat_shape && !stat_shape->empty()) stat_shape->back() = Dim::Known(1);
  Attributes reduce;
  std::vector<Value*> reduce_inputs = {w.Op("Mul", {xf, xf}, f32, x->shape())};
  if (graph.OpsetFor("") >= kReduceAxesInputOpset) {
    reduce_inputs.push_back(graph.AddConstant(graph.UniqueName(node->name() + "/axes"),
                                              *Tensor::FromVector<int64_t>({1}, {-1})));
  } else {
    reduce.Set("axes", std::vector<int64_t>{-1});
  }
  Value* mean = w.Op("ReduceMean", reduce_inputs, f32, stat_shape, std::move(reduce));
  Value* rms = w.Op("Sqrt", {w.Op("Add", {mean, w.Scalar(f32, epsilon)}, f32, stat_shape)}, f32, stat_shape);
  Value* normed = w.Op("Div", {xf, rms}, f32, x->shape());
  if (widen) normed = w.Op("Cast", {normed}, x->type(), x->shape(), CastTo(x->type()));
  graph.ReplaceNode(node, "Mul", "", {normed, scale});
}

// sum = Add(x, skip) and the norm of sum, which takes the node's place.
void LowerSkipNorm(Graph& graph, Node* node) {
  Value* x = node->input(0);
  Value* skip = node->input(1);
  Value* sum = node->num_outputs() > 1 ? node->output(1) : nullptr;
  if (sum == nullptr) sum = graph.AddValue(node->name() + "/sum", x->type(), x->shape());
  std::vector<Value*> norm_inputs = {sum};
  for (int i = 2; i < node->num_inputs(); ++i) norm_inputs.push_back(node->input(i));
  const std::string norm = node->op_type().substr(std::string("Skip").size());
  const std::string name = node->name();
  graph.ReplaceNode(node, norm, "", std::move(norm_inputs), {node->output(0)}, node->attributes());
  graph.AddNode("Add", "", graph.UniqueName(name + "/Add"), {x, skip}, {sum});
}

// The steps of an attune.ElementwiseChain as the ops they are; the last takes
// the node's place. A chain whose program does not read (a hand-written
// node) stays.
void LowerElementwiseChain(Graph& graph, Node* node) {
  auto ops = node->attributes().GetStrings("ops");
  auto operands = node->attributes().GetInts("operands");
  if (!ops.ok() || !operands.ok() || ops->empty() || operands->size() != 2 * ops->size()) return;
  const int64_t inputs = node->num_inputs();
  for (size_t j = 0; j < ops->size(); ++j)
    for (int k = 0; k < 2; ++k) {
      const int64_t r = (*operands)[2 * j + k];
      if (r < -1 || r >= inputs + static_cast<int64_t>(j) || (k == 0 && r < 0)) return;
    }
  Value* out = node->output(0);
  std::vector<Value*> results;
  for (size_t j = 0; j < ops->size(); ++j) {
    auto value = [&](int64_t r) { return r < inputs ? node->input(static_cast<int>(r)) : results[r - inputs]; };
    std::vector<Value*> in = {value((*operands)[2 * j])};
    if ((*operands)[2 * j + 1] >= 0) in.push_back(value((*operands)[2 * j + 1]));
    const std::string& op = (*ops)[j];
    if (j + 1 == ops->size()) {
      graph.ReplaceNode(node, op, "", std::move(in));
      return;
    }
    Value* v = graph.AddValue(node->name() + "/" + op, out->type(), out->shape());
    graph.AddNode(op, "", graph.UniqueName(node->name() + "/" + op), std::move(in), {v});
    results.push_back(v);
  }
}

}  // namespace

absl::Status LowerFusedOpsForOnnx(Graph& graph) {
  for (Node* node : graph.nodes())
    if (node->domain() == "attune" &&
        (node->op_type() == "SkipLayerNormalization" || node->op_type() == "SkipRMSNormalization") &&
        node->num_inputs() >= 3 && node->input(0) != nullptr && node->input(1) != nullptr)
      LowerSkipNorm(graph, node);
    else if (node->domain() == "attune" && node->op_type() == "ElementwiseChain")
      LowerElementwiseChain(graph, node);
  const int opset = graph.OpsetFor("");
  for (Node* node : graph.nodes()) {
    // The constants and casts of the definition take x's type.
    if (!node->domain().empty() || node->input(0) == nullptr || node->input(0)->type() == ElementType::kUndefined)
      continue;
    const std::string& op = node->op_type();
    if (op == "Gelu" && opset < kGeluOpset) LowerGelu(graph, node);
    else if (op == "Swish" && opset < kSwishOpset) LowerSwish(graph, node);
    else if (op == "RMSNormalization" && opset < kRmsNormalizationOpset) LowerRmsNorm(graph, node);
  }
  // Nothing of Attune's own left: the model imports no attune domain.
  bool attune_left = false;
  for (const Node* node : graph.nodes()) attune_left |= node->domain() == "attune";
  if (!attune_left) graph.RemoveOpset("attune");
  return absl::OkStatus();
}

}  // namespace attune
