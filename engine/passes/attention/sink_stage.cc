// Stage 4b of the attention rule (attention_stages.h): an attention sink. The
// subgraph concatenates one more key column to the masked scores, a learned
// logit per head broadcast to every row ((1, H, 1, 1) expanded to
// (B, H, T, 1)), may subtract the row max, softmaxes, and slices the column
// off before P·V. The sink then joins each row's denominator and weights no
// value: the fused op's sinks input. Each check returns the first reason.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/passes/attention/attention_stages.h"
#include "engine/pattern/constants.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

namespace c = captures;

// The axis a node's int attribute or constant input names, normalised to `rank`.
std::optional<int64_t> NormalizedAxis(int64_t axis, int rank) {
  const int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) return std::nullopt;
  return a;
}

// The one axis a ReduceMax reduces (attribute before opset 18, input after).
std::optional<int64_t> ReducedAxis(const Node& n, int rank) {
  std::optional<std::vector<int64_t>> axes;
  if (n.attributes().Has("axes")) {
    auto a = n.attributes().GetInts("axes");
    if (a.ok()) axes = *a;
  } else if (n.num_inputs() > 1 && n.input(1) != nullptr) {
    if (const Tensor* t = pattern::ConstantOf(n.input(1))) axes = pattern::TensorAsInts(*t);
  }
  if (!axes || axes->size() != 1) return std::nullopt;
  return NormalizedAxis((*axes)[0], rank);
}

std::optional<Reason> CheckRowMax(const Node& row_max, int rank) {
  if (row_max.attributes().GetInt("keepdims", 1).value_or(1) != 1)
    return Reason(absl::StrCat(row_max.Describe(), " drops the reduced axis: not a row max subtracted per row"));
  const std::optional<int64_t> axis = ReducedAxis(row_max, rank);
  if (!axis || *axis != rank - 1)
    return Reason(absl::StrCat(row_max.Describe(), " does not reduce the key axis alone: not the row max"));
  return std::nullopt;
}

// The constant input `i` of a Slice as ints, or nothing.
std::optional<std::vector<int64_t>> SliceInts(const Node& slice, int i) {
  if (slice.num_inputs() <= i || slice.input(i) == nullptr) return std::nullopt;
  const Tensor* t = pattern::ConstantOf(slice.input(i));
  if (t == nullptr) return std::nullopt;
  return pattern::TensorAsInts(*t);
}

// The Slice must keep the keys [0, S) of the S + 1 columns, dropping the
// sink's column, which the Concat put last.
std::optional<Reason> CheckSlice(const Node& slice, const Value* logits, int rank) {
  if (slice.attributes().Has("starts")) return Reason(absl::StrCat(slice.Describe(), " takes attributes (before opset 10)"));
  const auto starts = SliceInts(slice, 1), ends = SliceInts(slice, 2), axes = SliceInts(slice, 3);
  const bool has_steps = slice.num_inputs() > 4 && slice.input(4) != nullptr;
  const auto steps = SliceInts(slice, 4);
  if (!starts || !ends || !axes || (has_steps && !steps))
    return Reason(absl::StrCat(slice.Describe(), " has starts, ends, axes or steps that are not constants"));
  if (starts->size() != 1 || ends->size() != 1 || axes->size() != 1 || (steps && steps->size() != 1))
    return Reason(absl::StrCat(slice.Describe(), " slices more than one axis"));
  const std::optional<int64_t> axis = NormalizedAxis((*axes)[0], rank);
  if (!axis || *axis != rank - 1) return Reason(absl::StrCat(slice.Describe(), " does not slice the key axis"));
  if (steps && (*steps)[0] != 1) return Reason(absl::StrCat(slice.Describe(), " steps by ", (*steps)[0]));
  // The end: -1 (every column but the last), or S where the S + 1 columns are known.
  int64_t end = (*ends)[0];
  const std::optional<SymbolicShape>& shape = logits->shape();
  const bool known = shape && static_cast<int>(shape->size()) == rank && shape->back().is_known();
  if (end >= 0 && known) end -= shape->back().value();
  if ((*starts)[0] != 0 || end != -1)
    return Reason(absl::StrCat(slice.Describe(), " keeps columns [", (*starts)[0], ", ",
                               (*ends)[0] >= (int64_t{1} << 40) ? "end" : absl::StrCat((*ends)[0]),
                               ") of the scores and the sink column: not the keys [0, -1), so P·V would weight the "
                               "sink or lose a key"));
  return std::nullopt;
}

// The logits per head of a constant of `shape` (aligned right against the
// scores'), which must hold one value per head (or one for all).
std::variant<std::vector<float>, Reason> PerHead(const std::vector<double>& values, const SymbolicShape& shape,
                                                 ElementType constant_type, int rank, int64_t heads,
                                                 ElementType type, const Value* column) {
  if (constant_type != type)
    return Reason(absl::StrCat("the sink constant behind ", Quote(column), " is ", ElementTypeName(constant_type),
                               ", the scores ", ElementTypeName(type)));
  if (static_cast<int>(shape.size()) > rank)
    return Reason(absl::StrCat("the sink constant behind ", Quote(column), " has more dims than the scores"));
  if (heads <= 0) return Reason("the number of query heads is unknown");
  const int head_axis = static_cast<int>(shape.size()) - (rank - 1);  // the scores' axis 1, aligned right
  std::vector<int64_t> dims;
  for (const Dim& d : shape) {
    if (!d.is_known())
      return Reason(absl::StrCat("the sink constant behind ", Quote(column), " has a shape that is not known"));
    dims.push_back(d.value());
  }
  const int64_t per_head = head_axis >= 0 ? dims[head_axis] : 1;
  if (per_head != 1 && per_head != heads)
    return Reason(absl::StrCat("the sink constant behind ", Quote(column), " has ", per_head, " logits for ", heads,
                               " heads"));
  // Every element holds its head's logit: the same value along every other
  // axis (a constant folded to (B, H, T, 1) repeats it), compared bit for bit.
  int64_t inner = 1;  // elements per step of the head axis
  for (size_t d = std::max(head_axis + 1, 0); d < dims.size(); ++d) inner *= dims[d];
  std::vector<std::optional<double>> logit(static_cast<size_t>(heads));
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t h = per_head == 1 ? 0 : (static_cast<int64_t>(i) / inner) % per_head;
    const double x = values[i];
    if (!logit[h]) logit[h] = x;
    const bool same = (std::isnan(x) && std::isnan(*logit[h])) || x == *logit[h];
    if (!same)
      return Reason(absl::StrCat("the column ", Quote(column), " holds different values for one head (",
                                 *logit[h], " and ", x, "): not a constant per head, not an attention sink"));
  }
  std::vector<float> logits(static_cast<size_t>(heads));
  for (int64_t h = 0; h < heads; ++h) logits[h] = static_cast<float>(*logit[per_head == 1 ? 0 : h]);
  return logits;
}

// The column's values: a constant (seen through Expand, Identity and views of
// a constant) holding one logit per head (or one for all), and a column one
// key wide.
std::variant<std::vector<float>, Reason> SinkLogits(const Value* column, int rank, int64_t heads,
                                                    ElementType type, std::string& source) {
  const std::optional<SymbolicShape>& out = column->shape();
  if (!out || static_cast<int>(out->size()) != rank || !(out->back() == Dim::Known(1)))
    return Reason(absl::StrCat("the column ", Quote(column), " concatenated after the keys is not provably one key wide"));
  const Value* v = column;
  while (const Node* p = v->producer()) {
    if (pattern::ConstantOf(v) != nullptr) break;
    if (p->domain().empty() && (p->op_type() == "Expand" || p->op_type() == "Identity")) {
      v = p->input(0);
      continue;
    }
    // A view keeps the constant's values in order under the shape it gives them.
    const bool view = p->domain().empty() && (p->op_type() == "Reshape" || p->op_type() == "Unsqueeze" ||
                                              p->op_type() == "Squeeze" || p->op_type() == "Flatten");
    if (view && p->input(0) != nullptr && pattern::ConstantOf(p->input(0)) != nullptr) {
      const Tensor* t = pattern::ConstantOf(p->input(0));
      auto values = pattern::TensorAsDoubles(*t);
      if (!values || !v->shape()) break;
      source = p->input(0)->name();
      return PerHead(*values, *v->shape(), t->type(), rank, heads, type, column);
    }
    break;
  }
  const Tensor* t = pattern::ConstantOf(v);
  if (t == nullptr)
    return Reason(absl::StrCat("the column ", Quote(column), " concatenated after the keys is not a constant per head ",
                               "(it is computed by ", v->producer() ? v->producer()->Describe() : "a graph input",
                               "): not an attention sink"));
  auto values = pattern::TensorAsDoubles(*t);
  if (!values) return Reason(absl::StrCat("the sink constant ", Quote(v), " is not a float tensor"));
  source = v->name();
  SymbolicShape shape;
  for (int64_t d : t->shape()) shape.push_back(Dim::Known(d));
  return PerHead(*values, shape, t->type(), rank, heads, type, column);
}

}  // namespace

std::variant<SinkDecision, Reason> DecideSinks(const pattern::Match& m, const AttentionVariant& variant, int rank,
                                               const Operands& ops, MaskDecision& mask) {
  const Node* concat = m.node(c::kSinkConcat);
  const Node* slice = m.node(c::kSinkSlice);
  if (concat == nullptr && slice == nullptr) return SinkDecision{};
  if (concat == nullptr)
    return Reason(absl::StrCat("the probabilities reach P·V through ", slice->Describe(),
                               ", but the softmax reads no column concatenated after the scores"));
  if (slice == nullptr)
    return Reason(absl::StrCat(concat->Describe(), " adds a column to the softmax that P·V does not slice off"));
  if (rank != 4) return Reason("an attention sink on scores whose heads are merged into the batch (rank 3)");
  auto axis = concat->attributes().GetInt("axis");
  if (!axis.ok() || NormalizedAxis(*axis, rank) != rank - 1)
    return Reason(absl::StrCat(concat->Describe(), " does not concatenate along the key axis"));
  if (const Node* row_max = m.node(c::kSinkRowMax))
    if (auto why = CheckRowMax(*row_max, rank)) return *why;
  if (auto why = CheckSlice(*slice, m.value(c::kSinkLogits), rank)) return *why;
  std::string source;
  auto logits = SinkLogits(m.value(c::kSinkColumn), rank, ops.q.heads, concat->output(0)->type(), source);
  if (auto* why = std::get_if<Reason>(&logits)) return *why;
  if (!mask.bias.empty()) return Reason("an attention sink with a position bias is not modelled");
  // A row whose every key is hidden gives the sink every weight; with equal
  // finite fills that depends on the fill, which the fills policy carries.
  if (mask.masked_rows == mha::MaskedRows::kUniform) {
    std::optional<double> fill = mask.uniform_fill;
    if (!fill && variant.mask == MaskForm::kWhere && m.value(c::kMaskFill) != nullptr)
      if (const Tensor* t = pattern::ConstantOf(m.value(c::kMaskFill))) fill = pattern::UniformValue(*t);
    if (!fill)
      return Reason("an attention sink where rows with every key hidden softmax one finite fill whose value is unknown");
    mask.masked_rows = mha::MaskedRows::kFills;
    mask.hidden_fills.assign(3, static_cast<float>(*fill));
    mask.hidden_fills_add_scores.clear();
  }
  SinkDecision d;
  d.logits = std::get<std::vector<float>>(std::move(logits));
  d.source = source;
  return d;
}

}  // namespace attune::attention
