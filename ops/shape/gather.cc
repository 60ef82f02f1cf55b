// Gather (whole slices along an axis) and GatherElements (one element per index).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/ir/file_constant.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {
namespace {

// Checks every index against the axis size and maps negatives; names the first bad one.
absl::StatusOr<std::vector<int64_t>> ResolveIndices(const Tensor& indices, int64_t dim, int64_t axis, const char* op) {
  ASSIGN_OR_RETURN(std::vector<int64_t> idx,
                   ReadIndexValues(indices, absl::StrCat(op, ": input 'indices'"), IndexTypes::kInt32OrInt64));
  for (size_t i = 0; i < idx.size(); ++i) {
    const int64_t v = idx[i];
    if (v < -dim || v >= dim)
      return absl::InvalidArgumentError(absl::StrCat(op, ": index ", v, " (element ", i,
                                                     " of 'indices') is out of range for axis ", axis, " of size ",
                                                     dim, " (valid: [", -dim, ", ", dim - 1, "])"));
    if (v < 0) idx[i] = v + dim;
  }
  return idx;
}

// Gather over data of `type` and `shape` whose bytes are at `src` (any alignment: rows are copied as bytes).
absl::Status GatherBytes(KernelContext& ctx, ElementType type, const std::vector<int64_t>& shape, const char* src,
                         int64_t axis_attr) {
  ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "Gather", "indices"));
  const int64_t rank = static_cast<int64_t>(shape.size());
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_attr, rank, "Gather"));
  const int64_t dim = shape[axis];
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ResolveIndices(*indices, dim, axis, "Gather"));
  std::vector<int64_t> out_shape(shape.begin(), shape.begin() + axis);
  out_shape.insert(out_shape.end(), indices->shape().begin(), indices->shape().end());
  out_shape.insert(out_shape.end(), shape.begin() + axis + 1, shape.end());
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, type, out_shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  const int64_t outer = DimProduct(shape, 0, axis);
  const int64_t block = DimProduct(shape, axis + 1, rank) * static_cast<int64_t>(ElementSize(type));
  const int64_t n = static_cast<int64_t>(idx.size());
  char* dst = static_cast<char*>(out->raw_data());
  const int threads = ThreadsForBytes(static_cast<int64_t>(out->byte_size()), ctx.threads());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t w = 0; w < outer * n; ++w) {
    const int64_t o = w / n, j = w % n;
    std::memcpy(dst + w * block, src + (o * dim + idx[j]) * block, block);
  }
  return absl::OkStatus();
}

absl::Status GatherRun(KernelContext& ctx, int64_t axis_attr) {
  ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Gather", "data"));
  return GatherBytes(ctx, data->type(), data->shape(), static_cast<const char*>(data->raw_data()), axis_attr);
}

// Gather from a table left in the model file (an embedding, core/ir/file_constant.h):
// only the pages of the rows it reads become resident.
class GatherFromFileKernel final : public Kernel {
 public:
  GatherFromFileKernel(std::shared_ptr<const ConstantHolder> held, const FileConstant* table, int64_t axis)
      : held_(std::move(held)), table_(table), axis_(axis) {}
  absl::Status Run(KernelContext& ctx) const override {
    return GatherBytes(ctx, table_->type(), table_->shape(), table_->bytes(), axis_);
  }
  std::shared_ptr<const ConstantHolder> HeldInput(int i) const override { return i == 0 ? held_ : nullptr; }

 private:
  std::shared_ptr<const ConstantHolder> held_;
  const FileConstant* table_;
  int64_t axis_;
};

template <typename U>
void GatherElementsTyped(const U* src, U* dst, const std::vector<int64_t>& idx, const std::vector<int64_t>& out_shape,
                         const std::vector<int64_t>& data_strides, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;  // data offset of pos with the axis coordinate left out
  for (size_t i = 0; i < idx.size(); ++i) {
    dst[i] = src[base + idx[i] * data_strides[axis]];
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t stride = d == axis ? 0 : data_strides[d];
      base += stride;
      if (++pos[d] < out_shape[d]) break;
      base -= stride * out_shape[d];
      pos[d] = 0;
    }
  }
}

absl::Status GatherElementsRun(KernelContext& ctx, int64_t axis_attr) {
  ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "GatherElements", "data"));
  ASSIGN_OR_RETURN(const Tensor* indices, RequiredInput(ctx, 1, "GatherElements", "indices"));
  const int64_t rank = data->rank();
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_attr, rank, "GatherElements"));
  bool fits = indices->rank() == rank;
  for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || indices->shape()[d] <= data->shape()[d];
  if (!fits)
    return absl::InvalidArgumentError(absl::StrCat("GatherElements: indices ", indices->DebugString(),
                                                   " do not fit data ", data->DebugString(), " on axis ", axis));
  ASSIGN_OR_RETURN(std::vector<int64_t> idx, ResolveIndices(*indices, data->shape()[axis], axis, "GatherElements"));
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data->type(), indices->shape()));
  if (out->num_elements() == 0) return absl::OkStatus();
  const std::vector<int64_t> strides = DenseStrides(data->shape());
  const void* src = data->raw_data();
  void* dst = out->raw_data();
  switch (ElementSize(data->type())) {
    case 1: GatherElementsTyped(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), idx, indices->shape(), strides, axis); break;
    case 2: GatherElementsTyped(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), idx, indices->shape(), strides, axis); break;
    case 4: GatherElementsTyped(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), idx, indices->shape(), strides, axis); break;
    case 8: GatherElementsTyped(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), idx, indices->shape(), strides, axis); break;
    default: return absl::InvalidArgumentError(absl::StrCat("GatherElements: unsupported data ", data->DebugString()));
  }
  return absl::OkStatus();
}

}  // namespace

KernelOr MakeGatherKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t axis, info.attrs().GetInt("axis", 0));
  if (!info.released_constants.empty() && info.released_constants[0] != nullptr)
    if (auto* table = dynamic_cast<const FileConstant*>(info.released_constants[0].get()))
      return std::make_unique<GatherFromFileKernel>(info.released_constants[0], table, axis);
  return MakeKernel([axis](KernelContext& ctx) { return GatherRun(ctx, axis); });
}

KernelOr MakeGatherElementsKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t axis, info.attrs().GetInt("axis", 0));
  return MakeKernel([axis](KernelContext& ctx) { return GatherElementsRun(ctx, axis); });
}

}  // namespace attune
