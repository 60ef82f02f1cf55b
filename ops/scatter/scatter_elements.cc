// ScatterElements (and the Scatter of opsets 9-10): indices and updates have
// one shape, of data's rank; each update lands at its own position in data
// with the coordinate on `axis` replaced by its index. Updates are applied in
// row-major order, so with reduction "none" a repeated target keeps the last
// one (ONNX leaves that case undefined).
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/scatter/kernels.h"
#include "ops/scatter/operands.h"
#include "ops/scatter/reduction.h"

namespace attune::scatter {
namespace {

absl::Status RunScatterElements(KernelContext& ctx, const std::string& label, int64_t axis_attr,
                                ScatterReduction reduction) {
  ASSIGN_OR_RETURN(const Operands in, ReadOperands(ctx, /*allow_int32=*/true, label));
  const Tensor& data = *in.data;
  const Tensor& indices = *in.indices;
  const Tensor& updates = *in.updates;
  const int64_t rank = data.rank();
  if (axis_attr < -rank || axis_attr >= rank)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": axis ", axis_attr, " is out of range for data ", ShapeToString(data.shape())));
  const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
  bool fits = indices.rank() == rank;
  for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || indices.shape()[d] <= data.shape()[d];
  if (!fits)
    return absl::InvalidArgumentError(absl::StrCat(label, ": indices ", ShapeToString(indices.shape()),
                                                   " do not fit data ", ShapeToString(data.shape()),
                                                   " (same rank, no larger outside axis ", axis, ")"));
  if (updates.shape() != indices.shape())
    return absl::InvalidArgumentError(absl::StrCat(label, ": updates ", ShapeToString(updates.shape()),
                                                   " must have the shape of indices ",
                                                   ShapeToString(indices.shape())));
  ASSIGN_OR_RETURN(const CombineFn combine, SelectCombine(data.type(), reduction, absl::StrCat(label, ": data")));
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data.type(), data.shape()));
  if (data.byte_size() > 0) std::memcpy(out->raw_data(), data.raw_data(), data.byte_size());
  if (indices.num_elements() == 0) return absl::OkStatus();

  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * data.shape()[d];
  const std::vector<int64_t>& shape = indices.shape();
  const int64_t dim = data.shape()[axis];
  const size_t element = ElementSize(data.type());
  char* dst = static_cast<char*>(out->raw_data());
  const char* src = static_cast<const char*>(updates.raw_data());
  // Walks indices' positions row-major; `base` is the position's offset in
  // data without its axis coordinate.
  std::vector<int64_t> pos(rank, 0);
  int64_t base = 0;
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const int64_t index = IndexAt(indices, i);
    if (!IndexInRange(index, dim)) return IndexOutOfRange(label, indices, i, index, axis, data);
    const int64_t target = base + (index < 0 ? index + dim : index) * strides[axis];
    combine(dst + target * element, src + i * element, 1);
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t step = d == axis ? 0 : strides[d];
      base += step;
      if (++pos[d] < shape[d]) break;
      base -= step * shape[d];
      pos[d] = 0;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeScatterElementsKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  auto axis = info.attrs().GetInt("axis", 0);
  if (!axis.ok()) return Annotate(axis.status(), label);
  ASSIGN_OR_RETURN(const ScatterReduction reduction, ReadScatterReduction(info, label));
  return MakeKernel([label = std::move(label), axis = *axis, reduction](KernelContext& ctx) {
    return RunScatterElements(ctx, label, axis, reduction);
  });
}

}  // namespace attune::scatter
