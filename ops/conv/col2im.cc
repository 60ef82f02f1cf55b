// Col2Im (opset 18): the inverse of im2col. input [N, C * prod(block_shape), L]
// holds, per channel and block offset, the values of L sliding blocks; they
// are summed into an image [N, C, image_shape...] with strides, dilations and
// pads (begin..., end...) as Conv defines them. L must equal the number of
// block positions. Sums in double.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/conv/kernels.h"

namespace attune {
namespace {

struct Col2ImAttributes {
  std::vector<int64_t> dilations, pads, strides;  // empty: defaults
};

absl::StatusOr<std::vector<int64_t>> ReadShapeInput(const std::string& label, const Tensor* t, const char* name) {
  if (t == nullptr || t->type() != ElementType::kInt64 || t->rank() != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " must be a 1-D int64 tensor"));
  std::vector<int64_t> v(t->data<int64_t>(), t->data<int64_t>() + t->num_elements());
  for (int64_t d : v)
    if (d <= 0) return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " ", ShapeToString(v),
                                                               " must hold positive sizes"));
  return v;
}

class Col2ImKernel final : public Kernel {
 public:
  Col2ImKernel(std::string label, Col2ImAttributes attrs) : label_(std::move(label)), a_(std::move(attrs)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input"));
    ASSIGN_OR_RETURN(std::vector<int64_t> image, ReadShapeInput(label_, ctx.input(1), "image_shape"));
    ASSIGN_OR_RETURN(std::vector<int64_t> block, ReadShapeInput(label_, ctx.input(2), "block_shape"));
    const size_t r = image.size();
    if (block.size() != r)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": block_shape has ", block.size(),
                                                     " dims and image_shape ", r));
    const std::vector<int64_t> dil = a_.dilations.empty() ? std::vector<int64_t>(r, 1) : a_.dilations;
    const std::vector<int64_t> str = a_.strides.empty() ? std::vector<int64_t>(r, 1) : a_.strides;
    const std::vector<int64_t> pad = a_.pads.empty() ? std::vector<int64_t>(2 * r, 0) : a_.pads;
    if (dil.size() != r || str.size() != r || pad.size() != 2 * r)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": dilations and strides need ", r, " values and pads ",
                                                     2 * r, " for image_shape ", ShapeToString(image)));
    std::vector<int64_t> blocks(r);
    int64_t block_size = 1, positions = 1;
    for (size_t i = 0; i < r; ++i) {
      blocks[i] = (image[i] + pad[i] + pad[r + i] - dil[i] * (block[i] - 1) - 1) / str[i] + 1;
      if (blocks[i] <= 0)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": no block position fits axis ", i, " of image_shape ",
                                                       ShapeToString(image)));
      block_size *= block[i], positions *= blocks[i];
    }
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() != 3 || xs[1] % block_size != 0 || xs[2] != positions)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input has shape ", ShapeToString(xs), "; expected [N, C * ",
                                                     block_size, ", ", positions, "]"));
    const int64_t n = xs[0], channels = xs[1] / block_size;
    std::vector<int64_t> out_shape{n, channels};
    for (int64_t d : image) out_shape.push_back(d);
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->type(), out_shape));
    int64_t plane = 1;  // bounded now that the output exists
    for (int64_t d : image) plane *= d;
    ASSIGN_OR_RETURN(std::vector<double> in, LoadAsDoubles(*x, absl::StrCat(label_, ": input")));
    std::vector<double> out(static_cast<size_t>(y->num_elements()), 0.0);
    std::vector<int64_t> offset(r), pos(r);
    for (int64_t nc = 0; nc < n * channels; ++nc)
      for (int64_t k = 0; k < block_size; ++k) {
        for (int64_t i = static_cast<int64_t>(r) - 1, rest = k; i >= 0; --i) offset[i] = rest % block[i], rest /= block[i];
        for (int64_t p = 0; p < positions; ++p) {
          for (int64_t i = static_cast<int64_t>(r) - 1, rest = p; i >= 0; --i) pos[i] = rest % blocks[i], rest /= blocks[i];
          int64_t at = 0;
          bool inside = true;
          for (size_t i = 0; i < r && inside; ++i) {
            const int64_t c = pos[i] * str[i] - pad[i] + offset[i] * dil[i];
            inside = c >= 0 && c < image[i];
            at = at * image[i] + c;
          }
          if (inside) out[nc * plane + at] += in[(nc * block_size + k) * positions + p];
        }
      }
    return StoreDoubles(out, *y, absl::StrCat(label_, ": output"));
  }

 private:
  std::string label_;
  Col2ImAttributes a_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeCol2ImKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 3 || !info.input_present[0] || !info.input_present[1] || !info.input_present[2])
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes input, image_shape and block_shape"));
  Col2ImAttributes a;
  ASSIGN_OR_RETURN(a.dilations, info.attrs().GetInts("dilations", {}));
  ASSIGN_OR_RETURN(a.pads, info.attrs().GetInts("pads", {}));
  ASSIGN_OR_RETURN(a.strides, info.attrs().GetInts("strides", {}));
  for (int64_t v : a.dilations)
    if (v <= 0) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'dilations' must be positive"));
  for (int64_t v : a.strides)
    if (v <= 0) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'strides' must be positive"));
  for (int64_t v : a.pads)
    if (v < 0) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'pads' must not be negative"));
  return std::make_unique<Col2ImKernel>(std::move(label), std::move(a));
}

}  // namespace attune
