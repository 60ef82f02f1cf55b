#include "ops/shape/axis_util.h"

#include <algorithm>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"

namespace attune {

absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank)
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(what), ": axis ", axis, " is out of range for rank ", rank, " (valid: [", -rank, ", ",
                     rank - 1, "])"));
  return axis < 0 ? axis + rank : axis;
}

absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank,
                                                   std::string_view what) {
  std::vector<int64_t> out;
  out.reserve(axes.size());
  for (int64_t a : axes) {
    auto axis = NormalizeAxis(a, rank, what);
    if (!axis.ok()) return axis.status();
    if (std::find(out.begin(), out.end(), *axis) != out.end())
      return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": axis ", a, " is repeated"));
    out.push_back(*axis);
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> ReadIndexValues(const Tensor& t, std::string_view what, IndexTypes types) {
  if (t.type() == ElementType::kInt64) {
    auto v = t.values<int64_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  if (t.type() == ElementType::kInt32 && types == IndexTypes::kInt32OrInt64) {
    auto v = t.values<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  return absl::InvalidArgumentError(absl::StrCat(Sv(what), " must be ",
                                                 types == IndexTypes::kInt64Only ? "int64" : "int32 or int64",
                                                 ", got ", t.DebugString()));
}

absl::StatusOr<std::vector<int64_t>> ReadIndexVector(const Tensor& t, std::string_view what, IndexTypes types) {
  if (t.rank() != 1)
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), " must be 1-D, got ", t.DebugString()));
  return ReadIndexValues(t, what, types);
}

absl::StatusOr<int64_t> ReadIndexScalar(const Tensor& t, std::string_view what, IndexTypes types) {
  if (t.num_elements() != 1 || t.rank() > 1)
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), " must be a scalar, got ", t.DebugString()));
  auto v = ReadIndexValues(t, what, types);
  if (!v.ok()) return v.status();
  return (*v)[0];
}

absl::StatusOr<const Tensor*> RequiredInput(const KernelContext& ctx, int i, std::string_view op,
                                            std::string_view name) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || t->empty())
    return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": missing required input ", i, " (", Sv(name), ")"));
  return t;
}

std::vector<int64_t> DenseStrides(const std::vector<int64_t>& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

int64_t DimProduct(const std::vector<int64_t>& shape, int64_t begin, int64_t end) {
  // Saturates: a zero-sized tensor may have other dims whose product overflows.
  int64_t p = 1;
  for (int64_t d = begin; d < end; ++d)
    if (__builtin_mul_overflow(p, shape[d], &p)) return INT64_MAX;
  return p;
}

}  // namespace attune
