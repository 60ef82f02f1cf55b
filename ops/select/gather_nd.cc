// GatherND (opsets 11, 12 with batch_dims, 13): each row of the last axis of
// indices picks a slice of data, within the batch it shares with indices.
// Negative indices count from the end; others out of range are refused.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/select/kernels.h"

namespace attune {

SelectKernelOr MakeGatherNDKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(int64_t b, info.attrs().GetInt("batch_dims", 0));
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* data = ctx.input(0);
    const Tensor* indices = ctx.input(1);
    if (data == nullptr || indices == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs data and indices"));
    if (indices->type() != ElementType::kInt64)
      return absl::InvalidArgumentError(absl::StrCat(label, ": indices must be int64"));
    const std::vector<int64_t>& ds = data->shape();
    const std::vector<int64_t>& is = indices->shape();
    const int64_t r = static_cast<int64_t>(ds.size()), q = static_cast<int64_t>(is.size());
    if (q < 1 || b < 0 || b >= std::min(r, q))
      return absl::InvalidArgumentError(absl::StrCat(label, ": batch_dims ", b, " does not fit data ",
                                                     ShapeToString(ds), " and indices ", ShapeToString(is)));
    const int64_t m = is[q - 1];
    if (m < 1 || m > r - b)
      return absl::InvalidArgumentError(absl::StrCat(label, ": indices ", ShapeToString(is), " index ", m,
                                                     " axes; data ", ShapeToString(ds), " has ", r - b,
                                                     " after the batch"));
    for (int64_t i = 0; i < b; ++i)
      if (ds[i] != is[i])
        return absl::InvalidArgumentError(absl::StrCat(label, ": the batch dims of data ", ShapeToString(ds),
                                                       " and indices ", ShapeToString(is), " differ"));
    std::vector<int64_t> out_shape(is.begin(), is.end() - 1);
    out_shape.insert(out_shape.end(), ds.begin() + b + m, ds.end());
    int64_t batch = 1, slice = 1, per_batch_data = 1;
    for (int64_t i = 0; i < b; ++i) batch *= ds[i];
    for (int64_t i = b + m; i < r; ++i) slice *= ds[i];
    for (int64_t i = b; i < r; ++i) per_batch_data *= ds[i];
    const int64_t rows = batch == 0 ? 0 : (indices->num_elements() / std::max<int64_t>(m, 1));
    const int64_t rows_per_batch = batch == 0 ? 0 : rows / batch;
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, data->type(), out_shape));
    const size_t elem = ElementSize(data->type());
    const char* in = static_cast<const char*>(data->raw_data());
    char* out = static_cast<char*>(y->raw_data());
    const int64_t* idx = indices->data<int64_t>();
    for (int64_t row = 0; row < rows; ++row) {
      int64_t offset = 0;
      for (int64_t k = 0; k < m; ++k) {
        const int64_t dim = ds[b + k];
        int64_t v = idx[row * m + k];
        if (v < -dim || v >= dim)
          return absl::InvalidArgumentError(absl::StrCat(label, ": indices holds ", v, ", out of range for axis ",
                                                         b + k, " of data ", ShapeToString(ds)));
        if (v < 0) v += dim;
        offset = offset * dim + v;
      }
      const int64_t base = (row / std::max<int64_t>(rows_per_batch, 1)) * per_batch_data + offset * slice;
      std::memcpy(out + row * slice * elem, in + base * elem, slice * elem);
    }
    return absl::OkStatus();
  });
}

}  // namespace attune
