// Slice: starts/ends/axes/steps resolved to a per-dim (start, step, count), then a strided copy.
#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {
namespace {

struct SliceParams {
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
};

absl::Status SliceRun(KernelContext& ctx, const Tensor& data, const SliceParams& p) {
  const int64_t rank = data.rank();
  const size_t n = p.starts.size();
  if (p.ends.size() != n || (p.axes && p.axes->size() != n) || (p.steps && p.steps->size() != n))
    return absl::InvalidArgumentError(absl::StrCat("Slice: starts, ends, axes and steps must have the same length (",
                                                   n, " starts, ", p.ends.size(), " ends)"));
  std::vector<int64_t> axes(n);
  if (p.axes) {
    ASSIGN_OR_RETURN(axes, NormalizeAxes(*p.axes, rank, "Slice"));
  } else {
    if (static_cast<int64_t>(n) > rank)
      return absl::InvalidArgumentError(absl::StrCat("Slice: ", n, " starts for input ", data.DebugString()));
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  }
  std::vector<int64_t> start(rank, 0), step(rank, 1), count(data.shape());
  for (size_t i = 0; i < n; ++i) {
    const int64_t a = axes[i], dim = data.shape()[a];
    const int64_t st = p.steps ? (*p.steps)[i] : 1;
    if (st == 0) return absl::InvalidArgumentError(absl::StrCat("Slice: step for axis ", a, " is 0"));
    step[a] = st;
    if (dim == 0) {
      count[a] = 0;
      continue;
    }
    int64_t b = p.starts[i], e = p.ends[i];
    // Negative positions count from the end; clamping first keeps INT64_MIN from overflowing.
    if (b < 0) b = std::max(b, -dim) + dim;
    if (e < 0) e = std::max(e, -dim - 1) + dim;  // may become -1: "before index 0" for negative steps
    if (st > 0) {
      b = std::clamp<int64_t>(b, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      count[a] = e > b ? (e - b - 1) / st + 1 : 0;
    } else {
      b = std::clamp<int64_t>(b, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      // -(st + 1) is |st| - 1 without overflowing at INT64_MIN.
      count[a] = b > e ? static_cast<int64_t>(static_cast<uint64_t>(b - e - 1) / (static_cast<uint64_t>(-(st + 1)) + 1)) + 1 : 0;
    }
    start[a] = b;
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data.type(), count));
  if (out->num_elements() == 0) return absl::OkStatus();
  const std::vector<int64_t> in_strides = DenseStrides(data.shape());
  std::vector<int64_t> src_strides(rank);
  int64_t offset = 0;
  for (int64_t d = 0; d < rank; ++d) {
    offset += start[d] * in_strides[d];
    // A step larger than the dim is taken at most once: use the dim stride to stay in range.
    src_strides[d] = count[d] > 1 ? step[d] * in_strides[d] : in_strides[d];
  }
  const size_t elem = ElementSize(data.type());
  StridedCopy(static_cast<const char*>(data.raw_data()) + offset * static_cast<int64_t>(elem), out->raw_data(), count,
              src_strides, elem, ctx.threads());
  return absl::OkStatus();
}

absl::StatusOr<std::optional<std::vector<int64_t>>> OptionalIndexInput(const KernelContext& ctx, int i,
                                                                       const char* what) {
  const Tensor* t = ctx.input(i);
  if (t == nullptr || t->empty()) return std::optional<std::vector<int64_t>>();
  ASSIGN_OR_RETURN(std::vector<int64_t> v, ReadIndexVector(*t, what, IndexTypes::kInt32OrInt64));
  return std::optional<std::vector<int64_t>>(std::move(v));
}

}  // namespace

KernelOr MakeSliceKernel(const KernelInfo& info) {
  if (info.opset < 10) {  // Slice-1: starts, ends and axes are attributes; no steps
    SliceParams p;
    ASSIGN_OR_RETURN(p.starts, info.attrs().GetInts("starts"));
    ASSIGN_OR_RETURN(p.ends, info.attrs().GetInts("ends"));
    if (info.attrs().Has("axes")) {
      ASSIGN_OR_RETURN(p.axes, info.attrs().GetInts("axes"));
    }
    return MakeKernel([p](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Slice", "data"));
      return SliceRun(ctx, *data, p);
    });
  }
  return MakeKernel([](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Slice", "data"));
    ASSIGN_OR_RETURN(const Tensor* starts, RequiredInput(ctx, 1, "Slice", "starts"));
    ASSIGN_OR_RETURN(const Tensor* ends, RequiredInput(ctx, 2, "Slice", "ends"));
    SliceParams p;
    ASSIGN_OR_RETURN(p.starts, ReadIndexVector(*starts, "Slice: input 'starts'", IndexTypes::kInt32OrInt64));
    ASSIGN_OR_RETURN(p.ends, ReadIndexVector(*ends, "Slice: input 'ends'", IndexTypes::kInt32OrInt64));
    if (starts->type() != ends->type())
      return absl::InvalidArgumentError("Slice: 'starts' and 'ends' must have the same type");
    ASSIGN_OR_RETURN(p.axes, OptionalIndexInput(ctx, 3, "Slice: input 'axes'"));
    ASSIGN_OR_RETURN(p.steps, OptionalIndexInput(ctx, 4, "Slice: input 'steps'"));
    return SliceRun(ctx, *data, p);
  });
}

}  // namespace attune
