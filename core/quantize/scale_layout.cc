#include "core/quantize/scale_layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace attune::quantize {

int64_t ScaleLayout::num_scales() const {
  switch (kind) {
    case Kind::kPerTensor: return 1;
    case Kind::kPerAxis: return axis_len;
    case Kind::kBlocked: return outer * blocks * inner;
  }
  return 1;
}

namespace {

std::string ShapeText(const std::vector<int64_t>& shape) { return absl::StrCat("[", absl::StrJoin(shape, ","), "]"); }

}  // namespace

absl::StatusOr<ScaleLayout> PlanScaleLayout(const std::string& label, const std::vector<int64_t>& x_shape,
                                            const std::vector<int64_t>& scale_shape, int64_t axis, int64_t block_size) {
  ScaleLayout layout;
  const int64_t rank = static_cast<int64_t>(x_shape.size());
  const bool scalar = scale_shape.empty() || (scale_shape.size() == 1 && scale_shape[0] == 1 && block_size == 0);
  if (block_size < 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": block_size ", block_size, " is negative"));
  if (scalar && block_size == 0) {
    for (int64_t d : x_shape) layout.inner *= d;  // one row of every element
    return layout;
  }
  if (axis < -rank || axis >= rank)
    return absl::InvalidArgumentError(absl::StrCat(label, ": axis ", axis, " is out of range for input x of rank ",
                                                   rank, " (scale ", ShapeText(scale_shape), ")"));
  if (axis < 0) axis += rank;
  for (int64_t d = 0; d < axis; ++d) layout.outer *= x_shape[d];
  layout.axis_len = x_shape[axis];
  for (int64_t d = axis + 1; d < rank; ++d) layout.inner *= x_shape[d];
  if (block_size == 0) {
    if (scale_shape.size() != 1 || scale_shape[0] != layout.axis_len)
      return absl::InvalidArgumentError(absl::StrCat(label, ": scale of shape ", ShapeText(scale_shape),
                                                     " does not fit input x ", ShapeText(x_shape), " on axis ", axis,
                                                     " (a per-axis scale has ", layout.axis_len, " elements)"));
    layout.kind = ScaleLayout::Kind::kPerAxis;
    return layout;
  }
  layout.kind = ScaleLayout::Kind::kBlocked;
  layout.block = block_size;
  layout.blocks = (layout.axis_len + block_size - 1) / block_size;
  std::vector<int64_t> want = x_shape;
  want[axis] = layout.blocks;
  if (scale_shape != want)
    return absl::InvalidArgumentError(absl::StrCat(label, ": blocked scale of shape ", ShapeText(scale_shape),
                                                   " does not fit input x ", ShapeText(x_shape), " with block_size ",
                                                   block_size, " on axis ", axis, " (expected ", ShapeText(want), ")"));
  return layout;
}

}  // namespace attune::quantize
