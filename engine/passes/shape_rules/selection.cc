// Shape rules of the selection and indexing ops (NonZero's and EyeLike's are
// in generators.cc). TopK's, GatherND's and OneHot's outputs follow from
// their inputs; those of Compress and Unique depend on data, so they get
// their rank and fresh dims where the data decides.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

SymbolicShape FreshShape(const ShapeContext& ctx, int output, int64_t rank) {
  SymbolicShape s;
  for (int64_t i = 0; i < rank; ++i) s.push_back(ctx.FreshDim(output, static_cast<int>(i)));
  return s;
}

absl::Status TopKRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  if (ctx.num_outputs() > 1) ctx.output(1).type = ElementType::kInt64;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().GetInt("axis", -1));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, static_cast<int64_t>(x->size()), ctx));
  SymbolicShape shape = *x;
  std::optional<int64_t> k;
  if (ctx.opset() < 10) {
    ASSIGN_OR_RETURN(int64_t kv, ctx.attrs().GetInt("k"));
    k = kv;
  } else if (std::optional<std::vector<int64_t>> kv = ctx.InputInts(1); kv && kv->size() == 1) {
    k = (*kv)[0];
  }
  shape[axis] = k ? Dim::Known(*k) : ctx.FreshDim(0, static_cast<int>(axis));
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).shape = shape;
  return absl::OkStatus();
}

// Output 0 of Compress and Unique: 1-D of a fresh length without an axis,
// else X's shape with a fresh dim at the axis (how many slices the data keeps).
absl::Status KeptAlongAxisShape(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!ctx.attrs().Has("axis")) {
    ctx.output(0).shape = FreshShape(ctx, 0, 1);
    return absl::OkStatus();
  }
  if (!x) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().GetInt("axis"));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, static_cast<int64_t>(x->size()), ctx));
  SymbolicShape shape = *x;
  shape[axis] = ctx.FreshDim(0, static_cast<int>(axis));
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

absl::Status UniqueRule(ShapeContext& ctx) {
  for (int o = 1; o < ctx.num_outputs(); ++o) {
    ctx.output(o).type = ElementType::kInt64;
    ctx.output(o).shape = FreshShape(ctx, o, 1);
  }
  return KeptAlongAxisShape(ctx);
}

absl::Status GatherNDRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& data = ctx.input(0).shape;
  const std::optional<SymbolicShape>& idx = ctx.input(1).shape;
  if (!data || !idx || idx->empty() || !idx->back().is_known()) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t b, ctx.attrs().GetInt("batch_dims", 0));
  const int64_t m = idx->back().value();
  if (b < 0 || m < 1 || b + m > static_cast<int64_t>(data->size()))
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": indices ", SymbolicShapeToString(*idx),
                                                   " do not fit data ", SymbolicShapeToString(*data)));
  SymbolicShape shape(idx->begin(), idx->end() - 1);
  shape.insert(shape.end(), data->begin() + b + m, data->end());
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

absl::Status OneHotRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(2).type;
  const std::optional<SymbolicShape>& idx = ctx.input(0).shape;
  if (!idx) return absl::OkStatus();
  ASSIGN_OR_RETURN(int64_t axis, ctx.attrs().GetInt("axis", -1));
  ASSIGN_OR_RETURN(axis, NormalizeAxis(axis, static_cast<int64_t>(idx->size()) + 1, ctx));
  SymbolicShape shape = *idx;
  std::optional<std::vector<int64_t>> depth = ctx.InputInts(1);
  shape.insert(shape.begin() + axis,
               depth && depth->size() == 1 ? Dim::Known((*depth)[0]) : ctx.FreshDim(0, static_cast<int>(axis)));
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// NonMaxSuppression: [selected, 3] int64; how many are selected depends on the data.
absl::Status NonMaxSuppressionRule(ShapeContext& ctx) {
  ctx.output(0).type = ElementType::kInt64;
  ctx.output(0).shape = SymbolicShape{ctx.FreshDim(0, 0), Dim::Known(3)};
  return absl::OkStatus();
}

}  // namespace

void AddSelectionRules(RuleTable& table) {
  table.Add("NonMaxSuppression", NonMaxSuppressionRule);
  table.Add("TopK", TopKRule);
  table.Add("Compress", KeptAlongAxisShape);
  table.Add("Unique", UniqueRule);
  table.Add("GatherND", GatherNDRule);
  table.Add("OneHot", OneHotRule);
}

}  // namespace attune::shape_rules
