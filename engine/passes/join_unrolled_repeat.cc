// torch's repeat_interleave on a dim of known size (torch.onnx before 2.1)
// is written unrolled: the input is split into pieces of one along the dim,
// and each piece is unsqueezed after it, expanded to the repeat count and
// reshaped back, then the pieces are concatenated:
//
//   Split(X, axis d) -> x_i,  y_i = Reshape(Expand(Unsqueeze(x_i, d + 1), t), v),  Concat(y_0..y_n-1, axis d)
//
// This pass joins them into the one repeat the loop computes on the whole
// tensor, Reshape(Expand(Unsqueeze(X, d + 1), t), v), the form the grouped
// query heads (GQA by repeat_interleave) and other readers recognise; the
// attention then reads the K/V heads once instead of their copies.
//
// Exact: the pieces share every dim but d, where each has 1 and X has n. With
// t[d] = 1 the Expand meets the same dims and checks in both forms (a 1 at d
// broadcasts to n); v holds -1 at d, numbers (or 0, copying the same dim of
// the expanded tensor, before d) elsewhere, so each piece's -1 resolves to the
// same count q and the whole's to n * q, and the Concat of the n pieces along
// d is the whole reshape. Every t and v is the same constant; X's dim d is
// known to be n, the number of pieces of one (so the Split itself cannot fail
// where the joined form would run); each intermediate has no other reader.
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/passes/graph_edits.h"
#include "engine/passes/passes.h"
#include "engine/pattern/constants.h"

namespace attune {
namespace {

bool IsDefault(const Node* n, const char* op) { return n != nullptr && n->domain().empty() && n->op_type() == op; }

bool ReadOnceInside(const Value* v) { return v != nullptr && v->uses().size() == 1 && !v->is_graph_output(); }

std::optional<std::vector<int64_t>> ConstInts(const Value* v) {
  if (v == nullptr || v->constant() == nullptr || v->type() != ElementType::kInt64) return std::nullopt;
  auto data = ConstantData(*v);
  if (!data.ok() || data->rank() != 1) return std::nullopt;
  auto values = data->values<int64_t>();
  return std::vector<int64_t>(values.begin(), values.end());
}

std::optional<std::vector<int64_t>> UnsqueezeAxes(const Node& n) {
  if (n.num_inputs() == 2) return ConstInts(n.input(1));
  auto axes = n.attributes().GetInts("axes");
  if (n.num_inputs() != 1 || !axes.ok()) return std::nullopt;
  return *axes;
}

// The Split's pieces are each of size one along `axis`, and X's dim there is known to be their count.
bool SplitsIntoOnes(const Node& split, int64_t axis) {
  const Value* x = split.input(0);
  if (x == nullptr || !x->shape() || axis >= static_cast<int64_t>(x->shape()->size())) return false;
  const Dim& d = (*x->shape())[axis];
  if (!d.is_known() || d.value() != split.num_outputs()) return false;
  if (split.num_inputs() >= 2 && split.input(1) != nullptr) {
    auto sizes = ConstInts(split.input(1));
    if (!sizes || static_cast<int>(sizes->size()) != split.num_outputs()) return false;
    for (int64_t s : *sizes)
      if (s != 1) return false;
    return true;
  }
  auto sizes = split.attributes().GetInts("split");
  if (sizes.ok()) {
    for (int64_t s : *sizes)
      if (s != 1) return false;
    return static_cast<int>(sizes->size()) == split.num_outputs();
  }
  return true;  // equal parts of a dim of num_outputs
}

struct Unrolled {
  Value* x;
  int64_t axis;
  Value* expand_to;  // t
  Value* view;       // v
  int64_t allowzero = 0;
};

std::optional<Unrolled> Match(const Node& concat) {
  if (!IsDefault(&concat, "Concat") || concat.num_inputs() < 2 || concat.num_outputs() != 1) return std::nullopt;
  const Value* out = concat.output(0);
  if (out == nullptr || !out->shape()) return std::nullopt;
  const int64_t rank = static_cast<int64_t>(out->shape()->size());
  auto axis_attr = concat.attributes().GetInt("axis");
  if (!axis_attr.ok()) return std::nullopt;
  const int64_t axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
  if (axis < 0 || axis >= rank) return std::nullopt;
  Unrolled u{nullptr, axis, nullptr, nullptr, 0};
  const Node* split = nullptr;
  std::optional<std::vector<int64_t>> t, v;
  for (int i = 0; i < concat.num_inputs(); ++i) {
    const Value* y = concat.input(i);
    if (!ReadOnceInside(y)) return std::nullopt;
    const Node* reshape = y->producer();
    if (!IsDefault(reshape, "Reshape") || reshape->num_inputs() != 2) return std::nullopt;
    const Value* e = reshape->input(0);
    const Node* expand = e != nullptr ? e->producer() : nullptr;
    if (!ReadOnceInside(e) || !IsDefault(expand, "Expand") || expand->num_inputs() != 2) return std::nullopt;
    const Value* uq = expand->input(0);
    const Node* unsqueeze = uq != nullptr ? uq->producer() : nullptr;
    if (!ReadOnceInside(uq) || !IsDefault(unsqueeze, "Unsqueeze") ||
        UnsqueezeAxes(*unsqueeze) != std::vector<int64_t>{axis + 1})
      return std::nullopt;
    const Value* piece = unsqueeze->input(0);
    const Node* s = piece != nullptr ? piece->producer() : nullptr;
    if (!ReadOnceInside(piece) || !IsDefault(s, "Split") || s->num_outputs() != concat.num_inputs() ||
        s->output(i) != piece || (split != nullptr && s != split))
      return std::nullopt;
    split = s;
    auto ti = ConstInts(expand->input(1));
    auto vi = ConstInts(reshape->input(1));
    if (!ti || !vi || (t && *ti != *t) || (v && *vi != *v)) return std::nullopt;
    auto allowzero = reshape->attributes().GetInt("allowzero", 0);
    if (!allowzero.ok() || (i > 0 && *allowzero != u.allowzero)) return std::nullopt;
    t = ti;
    v = vi;
    if (i == 0) {
      u.expand_to = expand->input(1);
      u.view = reshape->input(1);
      u.allowzero = *allowzero;
    }
  }
  auto split_axis = split->attributes().GetInt("axis", 0);
  const Value* x = split->input(0);
  if (!split_axis.ok() || x == nullptr || !x->shape() || static_cast<int64_t>(x->shape()->size()) != rank) return std::nullopt;
  if ((*split_axis < 0 ? *split_axis + rank : *split_axis) != axis || !SplitsIntoOnes(*split, axis)) return std::nullopt;
  if (static_cast<int64_t>(t->size()) != rank + 1 || (*t)[axis] != 1) return std::nullopt;
  if (static_cast<int64_t>(v->size()) != rank || (*v)[axis] != -1) return std::nullopt;
  for (int64_t j = 0; j < rank; ++j)
    if (j != axis && ((*v)[j] < 0 || (j > axis && (*v)[j] == 0))) return std::nullopt;
  u.x = const_cast<Value*>(x);
  return u;
}

class JoinUnrolledRepeatPass final : public Pass {
 public:
  std::string_view name() const override { return "join_unrolled_repeat"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    bool changed = false;
    for (Node* concat : graph.nodes()) {
      auto m = Match(*concat);
      if (!m) continue;
      const std::string base = concat->output(0)->name() + "/repeat";
      Value* unsqueezed = graph.AddValue(base + "_unsqueezed", m->x->type());
      const std::vector<int64_t> axes = {m->axis + 1};
      if (graph.OpsetFor("") >= 13) {
        Value* axes_value = graph.AddConstant(graph.UniqueName(base + "_axes"), Int64Vector(axes));
        graph.AddNode("Unsqueeze", "", graph.UniqueName(base + "_unsqueeze"), {m->x, axes_value}, {unsqueezed});
      } else {
        Attributes attrs;
        attrs.Set("axes", axes);
        graph.AddNode("Unsqueeze", "", graph.UniqueName(base + "_unsqueeze"), {m->x}, {unsqueezed}, std::move(attrs));
      }
      Value* expanded = graph.AddValue(base + "_expanded", m->x->type());
      graph.AddNode("Expand", "", graph.UniqueName(base + "_expand"), {unsqueezed, m->expand_to}, {expanded});
      Value* joined = graph.AddValue(base, m->x->type());
      Attributes reshape;
      if (m->allowzero != 0) reshape.Set("allowzero", m->allowzero);
      graph.AddNode("Reshape", "", graph.UniqueName(base + "_reshape"), {expanded, m->view}, {joined},
                    std::move(reshape));
      ReplaceOutputWith(graph, concat, joined);
      changed = true;
    }
    if (changed) graph.RemoveDeadNodes();
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeJoinUnrolledRepeatPass() { return std::make_unique<JoinUnrolledRepeatPass>(); }

}  // namespace attune
