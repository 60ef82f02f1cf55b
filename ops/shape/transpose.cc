// Transpose: a strided copy whose source strides are the input's, permuted.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {

KernelOr MakeTransposeKernel(const KernelInfo& info) {
  std::optional<std::vector<int64_t>> perm_attr;
  if (info.attrs().Has("perm")) {
    ASSIGN_OR_RETURN(perm_attr, info.attrs().GetInts("perm"));
  }
  return MakeKernel([perm_attr](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Transpose", "data"));
    const int64_t rank = data->rank();
    std::vector<int64_t> perm(rank);
    if (perm_attr.has_value()) {
      if (static_cast<int64_t>(perm_attr->size()) != rank)
        return absl::InvalidArgumentError(absl::StrCat("Transpose: perm [", absl::StrJoin(*perm_attr, ", "),
                                                       "] does not match input ", data->DebugString()));
      ASSIGN_OR_RETURN(perm, NormalizeAxes(*perm_attr, rank, "Transpose perm"));
    } else {
      std::iota(perm.rbegin(), perm.rend(), 0);  // default: reverse the dims
    }
    const std::vector<int64_t> in_strides = DenseStrides(data->shape());
    std::vector<int64_t> out_shape(rank), src_strides(rank);
    for (int64_t d = 0; d < rank; ++d) {
      out_shape[d] = data->shape()[perm[d]];
      src_strides[d] = in_strides[perm[d]];
    }
    if (std::is_sorted(perm.begin(), perm.end())) {
      ctx.SetOutput(0, *data);
      return absl::OkStatus();
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, data->type(), out_shape));
    StridedCopy(data->raw_data(), out->raw_data(), out_shape, src_strides, ElementSize(data->type()), ctx.threads());
    return absl::OkStatus();
  });
}

}  // namespace attune
