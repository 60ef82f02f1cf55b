// DepthToSpace (DCR and CRD) and SpaceToDepth: each is a reshape to 6-D, a
// transpose and a reshape back, done as one strided copy of any element type.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/escape.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {
namespace {

class DepthSpaceKernel final : public Kernel {
 public:
  DepthSpaceKernel(std::string label, bool to_space, bool crd, int64_t block)
      : label_(std::move(label)), to_space_(to_space), crd_(crd), block_(block) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input"));
    const std::vector<int64_t>& s = x->shape();
    if (s.size() != 4)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", ShapeToString(s), " must be 4-D [N, C, H, W]"));
    const int64_t n = s[0], c = s[1], h = s[2], w = s[3], b = block_;
    std::vector<int64_t> out_shape, dims, strides;
    if (to_space_) {
      if (c % (b * b) != 0)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", ShapeToString(s), " has ", c,
                                                       " channels, not divisible by blocksize² ", b * b));
      const int64_t co = c / (b * b);
      out_shape = {n, co, h * b, w * b};
      dims = {n, co, h, b, w, b};
      if (crd_)  // channels as [C', b, b]
        strides = {c * h * w, b * b * h * w, w, b * h * w, 1, h * w};
      else  // channels as [b, b, C']
        strides = {c * h * w, h * w, w, b * co * h * w, 1, co * h * w};
    } else {
      if (h % b != 0 || w % b != 0)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", ShapeToString(s),
                                                       " has H or W not divisible by blocksize ", b));
      out_shape = {n, c * b * b, h / b, w / b};
      dims = {n, b, b, c, h / b, w / b};
      strides = {c * h * w, w, 1, h * w, b * w, b};
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
    if (y->num_elements() == 0) return absl::OkStatus();
    const size_t elem = ElementSize(x->type());
    if (elem != 1 && elem != 2 && elem != 4 && elem != 8)
      return absl::UnimplementedError(absl::StrCat(label_, ": element type ", ElementTypeName(x->type()),
                                                   " is not supported"));
    StridedCopy(x->raw_data(), y->raw_data(), dims, strides, elem,
                ThreadsForBytes(static_cast<int64_t>(y->byte_size()), ctx.threads()));
    return absl::OkStatus();
  }

 private:
  std::string label_;
  bool to_space_, crd_;
  int64_t block_;
};

KernelOr MakeDepthSpace(const KernelInfo& info, bool to_space) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 1 || !info.input_present[0] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes one input and gives one output"));
  ASSIGN_OR_RETURN(int64_t block, info.attrs().GetInt("blocksize"));
  if (block < 1 || block > (int64_t{1} << 20))
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'blocksize' is ", block,
                                                   "; it must be positive"));
  bool crd = false;
  if (to_space) {
    ASSIGN_OR_RETURN(std::string mode, info.attrs().GetString("mode", "DCR"));
    if (mode != "DCR" && mode != "CRD")
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'mode' is ", QuoteName(mode),
                                                     "; it must be DCR or CRD"));
    crd = mode == "CRD";
  }
  return std::make_unique<DepthSpaceKernel>(std::move(label), to_space, crd, block);
}

}  // namespace

KernelOr MakeDepthToSpaceKernel(const KernelInfo& info) { return MakeDepthSpace(info, true); }
KernelOr MakeSpaceToDepthKernel(const KernelInfo& info) { return MakeDepthSpace(info, false); }

}  // namespace attune
