// ScatterND: indices of shape [..., k] hold k-tuples that address data's
// leading k axes; the slice each tuple names (data's trailing r - k axes) is
// overwritten, or reduced, with the matching slice of updates. Updates are
// applied in row-major order of indices, so with reduction "none" a repeated
// tuple keeps its last update (ONNX leaves that case undefined).
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

absl::Status RunScatterND(KernelContext& ctx, const std::string& label, ScatterReduction reduction) {
  ASSIGN_OR_RETURN(const Operands in, ReadOperands(ctx, /*allow_int32=*/false, label));
  const Tensor& data = *in.data;
  const Tensor& indices = *in.indices;
  const Tensor& updates = *in.updates;
  if (indices.rank() == 0) return absl::InvalidArgumentError(absl::StrCat(label, ": indices must have rank >= 1"));
  const int64_t rank = data.rank();
  const int64_t k = indices.shape().back();
  if (k > rank)
    return absl::InvalidArgumentError(absl::StrCat(label, ": indices ", ShapeToString(indices.shape()),
                                                   " address ", k, " axes but data ", ShapeToString(data.shape()),
                                                   " has rank ", rank));
  std::vector<int64_t> want(indices.shape().begin(), indices.shape().end() - 1);
  want.insert(want.end(), data.shape().begin() + k, data.shape().end());
  if (updates.shape() != want)
    return absl::InvalidArgumentError(absl::StrCat(label, ": updates has shape ", ShapeToString(updates.shape()),
                                                   "; indices ", ShapeToString(indices.shape()), " and data ",
                                                   ShapeToString(data.shape()), " need ", ShapeToString(want)));
  ASSIGN_OR_RETURN(const CombineFn combine, SelectCombine(data.type(), reduction, absl::StrCat(label, ": data")));
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data.type(), data.shape()));
  if (data.byte_size() > 0) std::memcpy(out->raw_data(), data.raw_data(), data.byte_size());

  // Row-major element strides of data; the slice is everything after axis k - 1.
  std::vector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 1; d > 0; --d) strides[d - 1] = strides[d] * data.shape()[d];
  const int64_t slice = k == 0 ? data.num_elements() : strides[k - 1];
  // With k = 0 each (empty) tuple names all of data and indices holds no
  // element, so the count comes from updates; with data empty too there is
  // nothing to do or check.
  const int64_t tuples = k > 0 ? indices.num_elements() / k : slice > 0 ? updates.num_elements() / slice : 0;
  const size_t element = ElementSize(data.type());
  char* dst = static_cast<char*>(out->raw_data());
  const char* src = static_cast<const char*>(updates.raw_data());
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t offset = 0;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t index = IndexAt(indices, t * k + j);
      const int64_t dim = data.shape()[j];
      if (!IndexInRange(index, dim)) return IndexOutOfRange(label, indices, t * k + j, index, j, data);
      offset += (index < 0 ? index + dim : index) * strides[j];
    }
    combine(dst + offset * element, src + t * slice * element, slice);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeScatterNDKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(const ScatterReduction reduction, ReadScatterReduction(info, label));
  return MakeKernel([label = std::move(label), reduction](KernelContext& ctx) {
    return RunScatterND(ctx, label, reduction);
  });
}

}  // namespace attune::scatter
