#include "ops/common/broadcast.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "attune/tensor.h"

namespace attune {
namespace {

// The dim of `shape` aligned with output dim j of an output of rank `rank`
// (shapes are right-aligned; missing leading dims count as 1).
int64_t AlignedDim(std::span<const int64_t> shape, size_t rank, size_t j) {
  const size_t pad = rank - shape.size();
  return j < pad ? 1 : shape[j - pad];
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  const size_t rank = std::max(a.size(), b.size());
  std::vector<int64_t> out(rank);
  for (size_t j = 0; j < rank; ++j) {
    const int64_t da = AlignedDim(a, rank, j);
    const int64_t db = AlignedDim(b, rank, j);
    if (da == db || db == 1) {
      out[j] = da;
    } else if (da == 1) {
      out[j] = db;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("shapes ", ShapeToString(a), " and ", ShapeToString(b), " cannot broadcast"));
    }
  }
  return out;
}

absl::StatusOr<std::vector<int64_t>> BroadcastShapes(const std::vector<std::span<const int64_t>>& shapes) {
  std::vector<int64_t> out;
  for (const auto& shape : shapes) {
    auto next = BroadcastShapes(out, shape);
    if (!next.ok()) {
      // Name every shape: the pairwise message would show a partial result.
      std::string all;
      for (size_t i = 0; i < shapes.size(); ++i)
        absl::StrAppend(&all, i == 0 ? "" : shapes.size() == 2 ? " and " : ", ", ShapeToString(shapes[i]));
      return absl::InvalidArgumentError(absl::StrCat("shapes ", all, " cannot broadcast"));
    }
    out = *std::move(next);
  }
  return out;
}

bool IsUnidirectionalBroadcastable(std::span<const int64_t> from, std::span<const int64_t> to) {
  if (from.size() > to.size()) return false;
  for (size_t j = 0; j < to.size(); ++j) {
    const int64_t d = AlignedDim(from, to.size(), j);
    if (d != 1 && d != to[j]) return false;
  }
  return true;
}

absl::StatusOr<BroadcastPlan> BroadcastPlan::Create(const std::vector<std::span<const int64_t>>& input_shapes) {
  BroadcastPlan plan;
  auto out = BroadcastShapes(input_shapes);
  if (!out.ok()) return out.status();
  plan.output_shape_ = *std::move(out);
  plan.num_inputs_ = static_cast<int>(input_shapes.size());
  auto count = CheckedElementCount(plan.output_shape_);
  if (!count.ok()) return count.status();
  plan.num_elements_ = *count;

  const size_t rank = plan.output_shape_.size();
  const size_t n = input_shapes.size();

  // Group the output dims that are not 1 into runs with the same per-input
  // "broadcast here?" pattern; each group becomes one merged dim.
  std::vector<std::vector<bool>> group_broadcast;  // [group][input]
  for (size_t j = 0; j < rank; ++j) {
    const int64_t d = plan.output_shape_[j];
    if (d == 1) continue;
    std::vector<bool> pattern(n);
    for (size_t k = 0; k < n; ++k) pattern[k] = AlignedDim(input_shapes[k], rank, j) != d;
    if (!plan.dims_.empty() && group_broadcast.back() == pattern) {
      plan.dims_.back() *= d;
    } else {
      plan.dims_.push_back(d);
      group_broadcast.push_back(std::move(pattern));
    }
  }
  if (plan.dims_.empty()) {  // scalar output, or all dims 1
    plan.dims_.push_back(1);
    group_broadcast.push_back(std::vector<bool>(n, false));
  }

  const int r = plan.rank();
  plan.strides_.assign(n * r, 0);
  bool all_full = true, all_full_or_scalar = true;
  for (size_t k = 0; k < n; ++k) {
    int64_t stride = 1;
    for (int j = r - 1; j >= 0; --j) {
      if (group_broadcast[j][k]) continue;
      plan.strides_[k * r + j] = stride;
      stride *= plan.dims_[j];
    }
    const auto input_count = CheckedElementCount(input_shapes[k]);
    const bool full = input_count.ok() && *input_count == plan.num_elements_;
    all_full &= full;
    all_full_or_scalar &= full || (input_count.ok() && *input_count == 1);
  }
  plan.kind_ = all_full ? Kind::kSameShape : all_full_or_scalar ? Kind::kScalars : Kind::kGeneral;
  return plan;
}

}  // namespace attune
