// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each matrix in the last two dims.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {

KernelOr MakeTriluKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t upper, info.attrs().GetInt("upper", 1));
  return MakeKernel([upper](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Trilu", "input"));
    if (data->rank() < 2)
      return absl::InvalidArgumentError(absl::StrCat("Trilu: input must have rank >= 2, got ", data->DebugString()));
    int64_t k = 0;
    if (const Tensor* k_t = ctx.input(1); k_t != nullptr && !k_t->empty()) {
      ASSIGN_OR_RETURN(k, ReadIndexScalar(*k_t, "Trilu: input 'k'", IndexTypes::kInt64Only));
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data->type(), data->shape()));
    if (out->num_elements() == 0) return absl::OkStatus();
    const int64_t rank = data->rank();
    const int64_t rows = data->shape()[rank - 2], cols = data->shape()[rank - 1];
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);  // beyond this every k gives the same result
    const int64_t elem = static_cast<int64_t>(ElementSize(data->type()));
    const int64_t total_rows = data->num_elements() / cols;
    const char* src = static_cast<const char*>(data->raw_data());
    char* dst = static_cast<char*>(out->raw_data());
    const int threads = ThreadsForBytes(static_cast<int64_t>(out->byte_size()), ctx.threads());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < total_rows; ++r) {
      const int64_t i = r % rows;
      // Output zero-filled: copy only the kept columns [begin, end).
      const int64_t begin = upper ? std::clamp<int64_t>(i + k, 0, cols) : 0;
      const int64_t end = upper ? cols : std::clamp<int64_t>(i + k + 1, 0, cols);
      if (end > begin) std::memcpy(dst + (r * cols + begin) * elem, src + (r * cols + begin) * elem, (end - begin) * elem);
    }
    return absl::OkStatus();
  });
}

}  // namespace attune
