// How a normalization's Scale / B tensor lines up with the rows of X: the
// usual per-feature vector is read straight through; any other shape that
// broadcasts to X is resolved through offset tables.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

class ParamView {
 public:
  /// Checks that `param` broadcasts (unidirectionally) to `x_shape` and
  /// records how to address it for X viewed as [rows, x_shape[axis:]...].
  /// `op` and `name` go into error messages.
  static absl::StatusOr<ParamView> Make(std::string_view op, std::string_view name, const Tensor& param,
                                        const std::vector<int64_t>& x_shape, int axis);

  const void* data() const { return data_; }
  /// True when element j of a row is param[RowOffset(row) + j].
  bool contiguous() const { return inner_offsets_.empty(); }
  /// Offset of element j within a row when !contiguous().
  int64_t InnerOffset(int64_t j) const { return inner_offsets_[j]; }
  /// Offset of the row's first element (0 unless the param varies over rows).
  int64_t RowOffset(int64_t row) const;

 private:
  const void* data_ = nullptr;
  std::vector<int64_t> inner_offsets_;
  std::vector<int64_t> outer_dims_, outer_strides_;  // empty when rows share one param row
};

}  // namespace attune
