// Shape folding: shape computations (Shape -> Gather/Slice -> Unsqueeze ->
// Concat ...) whose result the shape analysis knows become constants; when the
// result is symbolic, the Reshape or Expand it feeds gets an equivalent
// constant target instead (0 = copy a dim, -1 = infer, 1 = keep in Expand).
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/graph_edits.h"
#include "engine/passes/passes.h"
#include "engine/passes/shape_analysis.h"

namespace attune {
namespace {

// The tracked contents of a value as a tensor, when every element is a number.
std::optional<Tensor> KnownData(const ValueFacts& f) {
  if (!f.data || !f.shape || !IsStatic(*f.shape)) return std::nullopt;
  std::vector<int64_t> values;
  for (const Dim& d : *f.data) {
    if (!d.is_known()) return std::nullopt;
    values.push_back(d.value());
  }
  auto t = Tensor::Create(f.type, StaticDims(*f.shape));
  if (!t.ok() || t->num_elements() != static_cast<int64_t>(values.size())) return std::nullopt;
  for (size_t i = 0; i < values.size(); ++i) {
    switch (f.type) {
      case ElementType::kInt64: t->data<int64_t>()[i] = values[i]; break;
      case ElementType::kInt32: t->data<int32_t>()[i] = static_cast<int32_t>(values[i]); break;
      case ElementType::kBool: t->data<bool>()[i] = values[i] != 0; break;
      default: return std::nullopt;
    }
  }
  return *t;
}

// A constant Reshape target equivalent to the symbolic `target` for an input
// of shape `in`: symbolic entries equal to the input dim at the same position
// become 0 (copy); at most one other entry (symbolic or unknown) becomes -1.
// Equivalence holds for every run in which the original Reshape succeeds:
// then the element counts match, so -1 resolves to exactly that entry, unless
// the input is empty and another entry is 0, where -1 cannot be inferred and
// the constant target would refuse a run the original allows (a batch of 0
// reshaped to [batch, 4, seq, 16]). So a -1 is only written beside entries
// that are known and positive.
std::optional<std::vector<int64_t>> CanonicalReshapeTarget(const std::vector<Dim>& target,
                                                           const std::optional<SymbolicShape>& in) {
  std::vector<int64_t> result;
  int infer_at = -1;
  bool copies = false;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& t = target[i];
    if (t.is_known()) {
      if (t.value() < -1) return std::nullopt;
      if (t.value() == 0) copies = true;
      if (t.value() == -1) {
        if (infer_at >= 0) return std::nullopt;
        infer_at = static_cast<int>(i);
      }
      result.push_back(t.value());
      continue;
    }
    if (!t.is_unknown() && in && i < in->size() && t == (*in)[i]) {
      copies = true;
      result.push_back(0);
      continue;
    }
    if (infer_at >= 0) return std::nullopt;
    infer_at = static_cast<int>(i);
    result.push_back(-1);
  }
  // A -1 the original target held keeps its meaning; one written here must not meet a copy.
  const bool wrote_infer = infer_at >= 0 && !target[infer_at].is_known();
  if (wrote_infer && copies) return std::nullopt;
  return result;
}

// A constant Expand shape equivalent to `target` for an input of shape `in`:
// symbolic entries equal to the aligned input dim become 1.
std::optional<std::vector<int64_t>> CanonicalExpandShape(const std::vector<Dim>& target,
                                                         const std::optional<SymbolicShape>& in) {
  std::vector<int64_t> result;
  const int64_t offset = in ? static_cast<int64_t>(in->size()) - static_cast<int64_t>(target.size()) : 0;
  for (size_t i = 0; i < target.size(); ++i) {
    const Dim& t = target[i];
    if (t.is_known()) {
      result.push_back(t.value());
      continue;
    }
    const int64_t j = static_cast<int64_t>(i) + offset;
    if (!in || j < 0 || t.is_unknown() || !(t == (*in)[j])) return std::nullopt;
    result.push_back(1);
  }
  return result;
}

class ShapeFoldingPass final : public Pass {
 public:
  std::string_view name() const override { return "shape_folding"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(ShapeAnalysis analysis, ShapeAnalysis::Run(graph));
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    bool changed = false;
    for (Node* node : order) {
      // 1. A computed small integer tensor whose every element is known.
      if (node->num_outputs() == 1 && node->output(0) != nullptr && !node->output(0)->is_constant() &&
          node->op_type() != "Constant") {
        if (auto t = KnownData(analysis.facts(node->output(0)))) {
          RETURN_IF_ERROR(ReplaceNodeWithConstants(graph, node, {*t}));
          changed = true;
          continue;
        }
      }
      if (!node->domain().empty() || node->num_inputs() < 2 || node->input(1) == nullptr ||
          node->input(1)->is_constant())
        continue;
      const ValueFacts& target = analysis.facts(node->input(1));
      const ValueFacts& data = analysis.facts(node->input(0));
      if (!target.data) continue;
      // 2. Reshape / Expand with a symbolic target: an equivalent constant one.
      if (node->op_type() == "Reshape") {
        auto allow_zero = node->attributes().GetInt("allowzero", 0);
        if (!allow_zero.ok() || *allow_zero != 0) continue;
        if (auto shape = CanonicalReshapeTarget(*target.data, data.shape)) {
          SetConstantInput(graph, node, 1, *shape, "reshape_target");
          changed = true;
        }
      } else if (node->op_type() == "Expand") {
        if (auto shape = CanonicalExpandShape(*target.data, data.shape)) {
          SetConstantInput(graph, node, 1, *shape, "expand_shape");
          changed = true;
        }
      }
    }
    return changed;
  }

 private:
  static void SetConstantInput(Graph& graph, Node* node, int index, const std::vector<int64_t>& values,
                               const char* what) {
    Value* c = graph.AddConstant(absl::StrCat(node->name(), "/", what), Int64Vector(values));
    graph.SetNodeInput(node, index, c);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeShapeFoldingPass() { return std::make_unique<ShapeFoldingPass>(); }

}  // namespace attune
