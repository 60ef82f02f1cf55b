#include "ops/norm/param_view.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"

namespace attune {

absl::StatusOr<ParamView> ParamView::Make(std::string_view op, std::string_view name, const Tensor& param,
                                          const std::vector<int64_t>& x_shape, int axis) {
  const int rank = static_cast<int>(x_shape.size());
  const int p_rank = static_cast<int>(param.rank());
  if (p_rank > rank)
    return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": ", Sv(name), " ", ShapeToString(param.shape()),
                                                   " has more dims than X ", ShapeToString(x_shape)));
  // Stride of the param along each dim of X (0 where it broadcasts).
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= rank - p_rank; --d) {
    const int64_t p = param.shape()[d - (rank - p_rank)];
    if (p != x_shape[d] && p != 1)
      return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": ", Sv(name), " ", ShapeToString(param.shape()),
                                                     " does not broadcast to X ", ShapeToString(x_shape)));
    strides[d] = p == 1 ? 0 : stride;
    stride *= p;
  }

  ParamView view;
  view.data_ = param.raw_data();
  // Contiguous when the param spans the normalized dims exactly as X lays them out.
  bool contiguous = true;
  int64_t dense = 1;
  for (int d = rank - 1; d >= axis; --d) {
    if (x_shape[d] != 1 && strides[d] != dense) contiguous = false;
    dense *= x_shape[d];
  }
  if (!contiguous) {
    const int64_t inner = dense;
    view.inner_offsets_.resize(inner);
    for (int64_t j = 0; j < inner; ++j) {
      int64_t rest = j, offset = 0;
      for (int d = rank - 1; d >= axis; --d) {
        offset += (rest % x_shape[d]) * strides[d];
        rest /= x_shape[d];
      }
      view.inner_offsets_[j] = offset;
    }
  }
  if (std::any_of(strides.begin(), strides.begin() + axis, [](int64_t s) { return s != 0; })) {
    view.outer_dims_.assign(x_shape.begin(), x_shape.begin() + axis);
    view.outer_strides_.assign(strides.begin(), strides.begin() + axis);
  }
  return view;
}

int64_t ParamView::RowOffset(int64_t row) const {
  int64_t offset = 0;
  for (int d = static_cast<int>(outer_dims_.size()) - 1; d >= 0; --d) {
    offset += (row % outer_dims_[d]) * outer_strides_[d];
    row /= outer_dims_[d];
  }
  return offset;
}

}  // namespace attune
