// AffineGrid (opset 20): the sampling grid GridSample takes, from affine
// matrices theta [N, 2, 3] (2-D) or [N, 3, 4] (3-D) and size [N, C, H, W] or
// [N, C, D, H, W]. Each output point is theta applied to the point's
// normalised coordinates (x along W first, then y, z, then 1), which are
// -1 + 2 i / (n - 1) with align_corners and -1 + (2 i + 1) / n without.
// Output [N, H, W, 2] or [N, D, H, W, 3]; computed in double.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/resize/kernels.h"

namespace attune {
namespace {

double Normalised(int64_t i, int64_t n, bool align_corners) {
  if (align_corners) return n > 1 ? -1 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) : -1;
  return -1 + (2.0 * static_cast<double>(i) + 1) / static_cast<double>(n);
}

class AffineGridKernel final : public Kernel {
 public:
  AffineGridKernel(std::string label, bool align_corners) : label_(std::move(label)), align_corners_(align_corners) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* theta = ctx.input(0);
    const Tensor* size = ctx.input(1);
    if (theta == nullptr || size == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs theta and size"));
    if (size->type() != ElementType::kInt64 || size->rank() != 1 || (size->num_elements() != 4 && size->num_elements() != 5))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input size must be int64 [N, C, H, W] or [N, C, D, H, W]"));
    const std::vector<int64_t> dims(size->data<int64_t>(), size->data<int64_t>() + size->num_elements());
    const int64_t r = static_cast<int64_t>(dims.size()) - 2;  // 2 or 3 spatial axes
    for (int64_t d : dims)
      if (d < 0) return absl::InvalidArgumentError(absl::StrCat(label_, ": input size ", ShapeToString(dims),
                                                                " has a negative dim"));
    if (theta->shape() != std::vector<int64_t>{dims[0], r, r + 1})
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input theta has shape ", ShapeToString(theta->shape()),
                                                     "; expected [", dims[0], ", ", r, ", ", r + 1, "] for size ",
                                                     ShapeToString(dims)));
    std::vector<int64_t> out_shape{dims[0]};
    out_shape.insert(out_shape.end(), dims.begin() + 2, dims.end());
    out_shape.push_back(r);
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, theta->type(), out_shape));
    ASSIGN_OR_RETURN(std::vector<double> th, LoadAsDoubles(*theta, absl::StrCat(label_, ": input theta")));
    std::vector<double> out(static_cast<size_t>(y->num_elements()));
    int64_t points = 1;  // bounded now that the output exists
    for (int64_t i = 0; i < r; ++i) points *= dims[2 + i];
    double coord[4];
    for (int64_t n = 0; n < dims[0]; ++n)
      for (int64_t p = 0; p < points; ++p) {
        // coord: x (innermost axis) first, then y, then z, then 1.
        for (int64_t i = 0, rest = p; i < r; ++i) {
          const int64_t extent = dims[2 + r - 1 - i];
          coord[i] = Normalised(rest % extent, extent, align_corners_);
          rest /= extent;
        }
        coord[r] = 1;
        const double* m = th.data() + n * r * (r + 1);
        for (int64_t j = 0; j < r; ++j) {
          double sum = 0;
          for (int64_t k = 0; k <= r; ++k) sum += m[j * (r + 1) + k] * coord[k];
          out[(n * points + p) * r + j] = sum;
        }
      }
    return StoreDoubles(out, *y, absl::StrCat(label_, ": output grid"));
  }

 private:
  std::string label_;
  bool align_corners_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeAffineGridKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 2 || !info.input_present[0] || !info.input_present[1] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes theta and size and gives one output"));
  ASSIGN_OR_RETURN(int64_t align, info.attrs().GetInt("align_corners", 0));
  if (align != 0 && align != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'align_corners' is ", align, "; expected 0 or 1"));
  return std::make_unique<AffineGridKernel>(std::move(label), align == 1);
}

}  // namespace attune
