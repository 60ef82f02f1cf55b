// Removes arithmetic that provably does nothing. It exists for baddbmm
// (GPT-NeoX/Pythia, BLOOM): torch writes baddbmm(base, q, kT, beta, alpha) as
// Add(Mul(MatMul(q, kT), alpha), Mul(ConstantOfShape(0), beta)), and the
// attention fusion wants the scaled MatMul alone.
//
// Each rule keeps the output's element type, its shape (the constant's
// broadcast is proven not to grow the other operand: every constant dim is 1
// or provably equal to the dim it meets) and NaN/Inf semantics:
//   x·1 = x, 1·x = x, x/1 = x   exact in IEEE arithmetic and for integers,
//                               NaN and Inf included.
//   x−0 = x                     exact, −0 included.
//   x+0 = x, 0+x = x            exact except that −0 + 0 is +0: the sign of a
//                               zero, which no comparison, Softmax, MatMul or
//                               Where tells apart.
//   ConstantOfShape(v)·s        = ConstantOfShape(v·s) for a one-element
//                               float32 constant s: the same float product the
//                               Mul makes for every element, NaN or not.
//   Expand(m, shape) read by an element-wise op that broadcasts it against
//                               another operand x of that shape: the op reads m
//                               and broadcasts it itself (DistilBERT's
//                               masked_fill(mask.expand_as(scores), min)), when
//                               m provably broadcasts to x's shape: the same
//                               elements, and the same output shape.
//   Cast(x) to x's own type     = x: nothing changes, NaN included (a graph
//                               output becomes Identity(x), keeping its name;
//                               Phi and CodeGen cast their present caches so).
//   Identity(x) as a graph output: x's other readers read the output instead
//                               (the same tensor), so that x has one reader and
//                               a fusion that replaces x's producer can name its
//                               result as the graph output (CodeGen's key
//                               cache, whose length a Shape reads).
// Mul(x, 0) with x not a constant is never folded: x may be Inf or NaN, and
// then x·0 is NaN. (A constant x times 0 is constant folding's to compute.)
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "engine/passes/passes.h"
#include "engine/passes/shape_analysis.h"

namespace attune {
namespace {

// Every element of `t` equals `target` (1 or 0) in its own type.
bool AllEqual(const Tensor& t, int target) {
  if (t.num_elements() == 0) return false;  // an empty constant changes the shape
  auto all = [&](auto values) {
    for (auto v : values)
      if (!(v == target)) return false;  // NaN is never neutral
    return true;
  };
  switch (t.type()) {
    case ElementType::kFloat32: return all(t.values<float>());
    case ElementType::kFloat64: return all(t.values<double>());
    case ElementType::kInt32: return all(t.values<int32_t>());
    case ElementType::kInt64: return all(t.values<int64_t>());
    default: return false;
  }
}

// A filled constant: a constant tensor, or ConstantOfShape whose one value is
// known. `shape` is the static shape of a constant, else the symbolic shape
// shape inference gave the ConstantOfShape output.
struct Filled {
  std::optional<Tensor> tensor;  // a constant's data
  std::optional<Tensor> fill;    // a ConstantOfShape's one value
  std::optional<SymbolicShape> shape;
  ElementType type = ElementType::kUndefined;
};

std::optional<Tensor> ConstantOfShapeValue(const Node& node) {
  if (!node.attributes().Has("value")) return Tensor::Scalar<float>(0.0f);  // ONNX default
  auto t = node.attributes().GetTensor("value");
  if (!t.ok() || t->num_elements() != 1) return std::nullopt;
  return *t;
}

std::optional<Filled> ReadFilled(const Value* v) {
  if (v == nullptr) return std::nullopt;
  Filled f;
  if (const Tensor* t = v->constant()) {
    f.tensor = *t;
    f.shape = ShapeFromDims(t->shape());
    f.type = t->type();
    return f;
  }
  const Node* p = v->producer();
  if (p == nullptr || p->op_type() != "ConstantOfShape" || !p->domain().empty()) return std::nullopt;
  f.fill = ConstantOfShapeValue(*p);
  if (!f.fill) return std::nullopt;
  f.shape = v->shape();
  f.type = f.fill->type();
  return f;
}

bool FilledWith(const Filled& f, int target) {
  return f.tensor ? AllEqual(*f.tensor, target) : AllEqual(*f.fill, target);
}

// Broadcasting `c` against `x` gives x's shape: c's rank is not larger and
// each of c's dims (right-aligned) is 1 or provably x's dim.
bool BroadcastKeepsShape(const std::optional<SymbolicShape>& x, const std::optional<SymbolicShape>& c) {
  if (!x || !c || c->size() > x->size()) return false;
  const size_t offset = x->size() - c->size();
  for (size_t i = 0; i < c->size(); ++i) {
    const Dim& cd = (*c)[i];
    if (cd.is_known() && cd.value() == 1) continue;
    if (!(cd == (*x)[offset + i])) return false;
  }
  return true;
}

// `x` (op) `neutral` is x: same type, and the neutral operand's broadcast keeps x's shape.
bool IsNeutralOperand(const Value* x, const Value* neutral, int target) {
  auto f = ReadFilled(neutral);
  if (!f || x->type() == ElementType::kUndefined || f->type != x->type()) return false;
  return FilledWith(*f, target) && BroadcastKeepsShape(x->shape(), f->shape);
}

// The operand that the node passes through unchanged, or nullptr.
Value* PassedThrough(const Node& node) {
  if (!node.domain().empty() || node.num_inputs() != 2 || node.num_outputs() != 1) return nullptr;
  Value* a = node.input(0);
  Value* b = node.input(1);
  if (a == nullptr || b == nullptr) return nullptr;
  const std::string& op = node.op_type();
  if (op == "Mul") {
    if (IsNeutralOperand(a, b, 1)) return a;
    if (IsNeutralOperand(b, a, 1)) return b;
  } else if (op == "Div" || op == "Sub") {
    if (IsNeutralOperand(a, b, op == "Div" ? 1 : 0)) return a;
  } else if (op == "Add") {
    if (IsNeutralOperand(a, b, 0)) return a;
    if (IsNeutralOperand(b, a, 0)) return b;
  }
  return nullptr;
}

// Cast to the type its input already has.
bool IsSameTypeCast(const Node& node) {
  if (node.op_type() != "Cast" || !node.domain().empty() || node.num_inputs() != 1) return false;
  const Value* x = node.input(0);
  auto to = node.attributes().GetInt("to");
  return x != nullptr && to.ok() && x->type() != ElementType::kUndefined &&
         static_cast<ElementType>(*to) == x->type();
}

// Points the other readers of x at Identity(x) when that is a graph output.
bool MovedReadersToOutputIdentity(Graph& graph, const Node& node) {
  if (node.op_type() != "Identity" || !node.domain().empty() || node.num_inputs() != 1) return false;
  Value* x = node.input(0);
  Value* out = node.output(0);
  if (x == nullptr || out == nullptr || !out->is_graph_output() || x->producer() == nullptr || x->is_graph_output())
    return false;
  bool moved = false;
  const std::vector<Use> uses = x->uses();
  for (const Use& use : uses) {
    if (use.node == &node) continue;
    graph.SetNodeInput(use.node, use.index, out);
    moved = true;
  }
  return moved;
}

// Mul(ConstantOfShape(v), s) in either order, s a one-element float32
// constant whose rank does not exceed the fill's: the shape input and v·s.
struct ScaledFill {
  Value* shape_input;
  float value;
};

std::optional<ScaledFill> ScaledFillOf(const Node& node) {
  if (node.op_type() != "Mul" || !node.domain().empty() || node.num_inputs() != 2) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Value* fill_value = node.input(i);
    const Value* scale = node.input(1 - i);
    if (fill_value == nullptr || scale == nullptr || scale->constant() == nullptr) continue;
    const Node* p = fill_value->producer();
    if (p == nullptr || p->op_type() != "ConstantOfShape" || !p->domain().empty()) continue;
    auto fill = ConstantOfShapeValue(*p);
    const Tensor& s = *scale->constant();
    if (!fill || fill->type() != ElementType::kFloat32 || s.type() != ElementType::kFloat32 ||
        s.num_elements() != 1)
      continue;
    if (!fill_value->shape() || static_cast<size_t>(s.rank()) > fill_value->shape()->size()) continue;
    return ScaledFill{p->input(0), *fill->data<float>() * *s.data<float>()};
  }
  return std::nullopt;
}

// Ops that broadcast all their inputs against each other, element by element.
bool BroadcastsOperands(const Node& node) {
  static const absl::flat_hash_set<std::string> kOps = {
      "Add", "Sub", "Mul", "Div", "Pow", "Where", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor"};
  return node.domain().empty() && node.num_outputs() == 1 && kOps.contains(node.op_type());
}

bool FullyKnown(const std::optional<SymbolicShape>& s) {
  if (!s) return false;
  for (const Dim& d : *s)
    if (d.is_unknown()) return false;
  return true;
}

// Points each element-wise reader of Expand(m, shape) at m where another of
// its operands already has the expanded shape; true when any reader moved.
bool BypassRedundantExpand(Graph& graph, const Node& expand) {
  if (expand.op_type() != "Expand" || !expand.domain().empty() || expand.num_inputs() != 2) return false;
  Value* m = expand.input(0);
  Value* e = expand.output(0);
  if (m == nullptr || e == nullptr || !FullyKnown(e->shape())) return false;
  bool moved = false;
  const std::vector<Use> uses = e->uses();
  for (const Use& use : uses) {
    Node* reader = use.node;
    if (!BroadcastsOperands(*reader)) continue;
    bool other_has_shape = false;
    for (const Value* x : reader->inputs())
      if (x != nullptr && x != e && FullyKnown(x->shape()) && SameShape(x->shape(), e->shape()))
        other_has_shape = true;
    if (!other_has_shape || !BroadcastKeepsShape(e->shape(), m->shape())) continue;
    graph.SetNodeInput(reader, use.index, m);
    moved = true;
  }
  return moved;
}

class AlgebraicSimplifyPass final : public Pass {
 public:
  std::string_view name() const override { return "algebraic_simplify"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    bool changed = false;
    for (Node* node : graph.nodes()) {
      Value* out = node->output(0);
      if (out == nullptr) continue;
      if (BypassRedundantExpand(graph, *node)) {
        changed = true;
        continue;
      }
      if (auto scaled = ScaledFillOf(*node)) {
        Attributes attrs;
        auto value = Tensor::FromVector<float>({1}, {scaled->value});
        if (!value.ok()) return value.status();
        attrs.Set("value", *value);
        graph.ReplaceNode(node, "ConstantOfShape", "", {scaled->shape_input}, std::move(attrs));
        changed = true;
        continue;
      }
      if (MovedReadersToOutputIdentity(graph, *node)) {
        changed = true;
        continue;
      }
      if (IsSameTypeCast(*node) && out->is_graph_output()) {
        graph.ReplaceNode(node, "Identity", "", {node->input(0)});
        changed = true;
        continue;
      }
      Value* in = IsSameTypeCast(*node) ? node->input(0) : PassedThrough(*node);
      // A graph output keeps its producer: forwarding would rename the output.
      if (in == nullptr || out->is_graph_output()) continue;
      graph.ReplaceAllUsesWith(out, in);
      changed = true;
    }
    if (changed) graph.RemoveDeadNodes();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeAlgebraicSimplifyPass() { return std::make_unique<AlgebraicSimplifyPass>(); }

}  // namespace attune
