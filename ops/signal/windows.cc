// HannWindow, HammingWindow and BlackmanWindow (opset 17): a window of
// `size` samples, periodic (N = size) or symmetric (N = size - 1), computed in
// double and written in output_datatype (float32 by default).
#include <cmath>
#include <memory>
#include <numbers>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/signal/kernels.h"

namespace attune {

absl::StatusOr<std::unique_ptr<Kernel>> MakeWindowKernel(const KernelInfo& info, WindowKind kind) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(int64_t periodic, info.attrs().GetInt("periodic", 1));
  ASSIGN_OR_RETURN(int64_t dtype, info.attrs().GetInt("output_datatype", 1));
  const ElementType type = static_cast<ElementType>(dtype);
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* size_t_ = ctx.input(0);
    if (size_t_ == nullptr || size_t_->num_elements() != 1 ||
        (size_t_->type() != ElementType::kInt64 && size_t_->type() != ElementType::kInt32))
      return absl::InvalidArgumentError(absl::StrCat(label, ": input size must be one int32 or int64"));
    const int64_t size = size_t_->type() == ElementType::kInt64 ? size_t_->data<int64_t>()[0]
                                                                : size_t_->data<int32_t>()[0];
    if (size < 0) return absl::InvalidArgumentError(absl::StrCat(label, ": size is ", size, "; it must be >= 0"));
    const double n_total = static_cast<double>(periodic != 0 ? size : size - 1);
    return VisitType(NumericTypes{}, type, absl::StrCat(label, ": output_datatype"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, type, {size}));
      StorageOf<T>* out = y->data<StorageOf<T>>();
      for (int64_t n = 0; n < size; ++n) {
        const double x = 2 * std::numbers::pi * static_cast<double>(n) / n_total;
        double v = 0;
        switch (kind) {
          case WindowKind::kHann: v = 0.5 - 0.5 * std::cos(x); break;
          case WindowKind::kHamming: v = 25.0 / 46 - 21.0 / 46 * std::cos(x); break;
          case WindowKind::kBlackman: v = 0.42 - 0.5 * std::cos(x) + 0.08 * std::cos(2 * x); break;
        }
        if (n_total == 0) v = 1;
        out[n] = Arith<T>::Store(static_cast<ComputeOf<T>>(v));
      }
      return absl::OkStatus();
    });
  });
}

}  // namespace attune
