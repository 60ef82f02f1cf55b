// Expand (broadcast to a shape) and Tile (repeat along each axis): both are
// strided copies whose source strides are 0 on the repeated dims.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {
namespace {

absl::Status ExpandRun(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Expand", "input"));
  ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 1, "Expand", "shape"));
  ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndexVector(*shape_t, "Expand: input 'shape'", IndexTypes::kInt64Only));
  const int64_t in_rank = data->rank(), req_rank = static_cast<int64_t>(shape.size());
  const int64_t rank = std::max(in_rank, req_rank);
  const std::vector<int64_t> in_strides = DenseStrides(data->shape());
  std::vector<int64_t> out_shape(rank), src_strides(rank);
  for (int64_t d = 0; d < rank; ++d) {
    const int64_t di = d - (rank - in_rank), dr = d - (rank - req_rank);
    const int64_t in_dim = di >= 0 ? data->shape()[di] : 1;
    const int64_t req_dim = dr >= 0 ? shape[dr] : 1;
    if (req_dim < 0 || (in_dim != req_dim && in_dim != 1 && req_dim != 1))
      return absl::InvalidArgumentError(absl::StrCat("Expand: input ", data->DebugString(),
                                                     " cannot be broadcast to shape [", absl::StrJoin(shape, ", "),
                                                     "]"));
    out_shape[d] = in_dim == 1 ? req_dim : in_dim;
    src_strides[d] = in_dim == 1 ? 0 : in_strides[di];
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data->type(), out_shape));
  StridedCopy(data->raw_data(), out->raw_data(), out_shape, src_strides, ElementSize(data->type()), ctx.threads());
  return absl::OkStatus();
}

absl::Status TileRun(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Tile", "input"));
  ASSIGN_OR_RETURN(const Tensor* repeats_t, RequiredInput(ctx, 1, "Tile", "repeats"));
  ASSIGN_OR_RETURN(std::vector<int64_t> repeats,
                   ReadIndexVector(*repeats_t, "Tile: input 'repeats'", IndexTypes::kInt64Only));
  const int64_t rank = data->rank();
  if (static_cast<int64_t>(repeats.size()) != rank)
    return absl::InvalidArgumentError(absl::StrCat("Tile: 'repeats' has ", repeats.size(), " entries for input ",
                                                   data->DebugString()));
  const std::vector<int64_t> in_strides = DenseStrides(data->shape());
  // The output [r0*d0, r1*d1, ...] read row-major is [r0, d0, r1, d1, ...].
  std::vector<int64_t> out_shape(rank), copy_shape, copy_strides;
  for (int64_t d = 0; d < rank; ++d) {
    if (repeats[d] < 0)
      return absl::InvalidArgumentError(absl::StrCat("Tile: negative repeat ", repeats[d], " for axis ", d));
    if (__builtin_mul_overflow(data->shape()[d], repeats[d], &out_shape[d]))
      return absl::InvalidArgumentError(absl::StrCat("Tile: output dim ", d, " overflows"));
    copy_shape.insert(copy_shape.end(), {repeats[d], data->shape()[d]});
    copy_strides.insert(copy_strides.end(), {0, in_strides[d]});
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data->type(), out_shape));
  StridedCopy(data->raw_data(), out->raw_data(), copy_shape, copy_strides, ElementSize(data->type()), ctx.threads());
  return absl::OkStatus();
}

}  // namespace

KernelOr MakeExpandKernel(const KernelInfo& info) { return MakeKernel(ExpandRun); }
KernelOr MakeTileKernel(const KernelInfo& info) { return MakeKernel(TileRun); }

}  // namespace attune
