// TopK: the k largest (or smallest) elements of each line along an axis and
// their indices, equal values in index order (ONNX: the lower index first).
// NaN sorts above every number. K is an attribute before opset 10, an input after.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/select/kernels.h"

namespace attune {
namespace {

template <typename C>
bool Above(C a, C b) {  // a sorts before b when largest first
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

}  // namespace

SelectKernelOr MakeTopKKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(int64_t axis_attr, info.attrs().GetInt("axis", -1));
  ASSIGN_OR_RETURN(int64_t largest, info.attrs().GetInt("largest", 1));
  ASSIGN_OR_RETURN(int64_t k_attr, info.opset < 10 ? info.attrs().GetInt("k") : absl::StatusOr<int64_t>(-1));
  const int opset = info.opset;
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs input X"));
    int64_t k = k_attr;
    if (opset >= 10) {
      const Tensor* kt = ctx.input(1);
      if (kt == nullptr || kt->type() != ElementType::kInt64 || kt->num_elements() != 1)
        return absl::InvalidArgumentError(absl::StrCat(label, ": input K must be one int64"));
      k = kt->data<int64_t>()[0];
    }
    const std::vector<int64_t>& s = x->shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    if (axis_attr < -rank || axis_attr >= rank)
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": attribute 'axis' ", axis_attr, " is out of range for X ", ShapeToString(s)));
    const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
    const int64_t len = s[axis];
    if (k < 0 || k > len)
      return absl::InvalidArgumentError(absl::StrCat(label, ": K is ", k, "; it must be in [0, ", len,
                                                     "] for X ", ShapeToString(s)));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= s[i];
    for (int64_t i = axis + 1; i < rank; ++i) inner *= s[i];
    std::vector<int64_t> out_shape = s;
    out_shape[axis] = k;
    using TopKTypes = decltype(NumericTypes{});
    return VisitType(TopKTypes{}, x->type(), absl::StrCat(label, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using C = ComputeOf<T>;
      ASSIGN_OR_RETURN(Tensor * values, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
      ASSIGN_OR_RETURN(Tensor * indices, ctx.AllocateOutputForOverwrite(1, ElementType::kInt64, out_shape));
      if (values->num_elements() == 0) return absl::OkStatus();
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      StorageOf<T>* vo = values->data<StorageOf<T>>();
      int64_t* io = indices->data<int64_t>();
      ParallelForRange(outer * inner, std::max<int64_t>(1, kCostlyOpGrain / std::max<int64_t>(len, 1)),
                       ctx.threads(), [&](int64_t begin, int64_t end) {
                         std::vector<int64_t> order(len);
                         std::vector<C> line(len);
                         for (int64_t l = begin; l < end; ++l) {
                           const int64_t o = l / inner, j = l % inner;
                           for (int64_t i = 0; i < len; ++i) line[i] = Arith<T>::Load(in[(o * len + i) * inner + j]);
                           std::iota(order.begin(), order.end(), 0);
                           auto before = [&](int64_t a, int64_t b) {
                             const bool ab = largest ? Above(line[a], line[b]) : Above(line[b], line[a]);
                             const bool ba = largest ? Above(line[b], line[a]) : Above(line[a], line[b]);
                             return ab || (!ba && a < b);
                           };
                           std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
                           for (int64_t i = 0; i < k; ++i) {
                             vo[(o * k + i) * inner + j] = in[(o * len + order[i]) * inner + j];
                             io[(o * k + i) * inner + j] = order[i];
                           }
                         }
                       });
      return absl::OkStatus();
    });
  });
}

}  // namespace attune
