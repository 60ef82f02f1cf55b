// Hardmax: 1 at the first maximum of each line, 0 elsewhere. Before opset 13
// the input is seen as 2-D, [prod(dims before axis), prod(dims from axis)];
// from 13 the lines run along the one axis. NaN counts as the largest value.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/select/kernels.h"

namespace attune {

SelectKernelOr MakeHardmaxKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  const bool flatten = info.opset < 13;
  ASSIGN_OR_RETURN(int64_t axis_attr, info.attrs().GetInt("axis", flatten ? 1 : -1));
  return MakeKernel([label, flatten, axis_attr](KernelContext& ctx) -> absl::Status {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs input"));
    const std::vector<int64_t>& s = x->shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    if (axis_attr < -rank || axis_attr >= rank)
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": attribute 'axis' ", axis_attr, " is out of range for input ", ShapeToString(s)));
    const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
    int64_t outer = 1, len = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= s[i];
    for (int64_t i = axis; i < rank; ++i) (flatten || i == axis ? len : inner) *= s[i];
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label, ": input"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, x->type(), s));
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      StorageOf<T>* out = y->data<StorageOf<T>>();
      if (len == 0) return absl::OkStatus();
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          const int64_t base = o * len * inner + j;
          int64_t best = 0;
          auto best_v = Arith<T>::Load(in[base]);
          for (int64_t k = 1; k < len && !std::isnan(best_v); ++k) {
            const auto v = Arith<T>::Load(in[base + k * inner]);
            if (v > best_v || std::isnan(v)) best_v = v, best = k;
          }
          out[base + best * inner] = Arith<T>::Store(1);
        }
      return absl::OkStatus();
    });
  });
}

}  // namespace attune
