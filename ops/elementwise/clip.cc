// Clip: bounds from attributes (opsets 6-10, float types) or from optional
// one-element inputs of the input's type (opset 11+). min > max gives max
// everywhere, as in numpy's clip; NaN inputs stay NaN.
#include <limits>

#include "ops/common/node_label.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

template <typename C>
struct ClipFn {
  C lo, hi;
  C operator()(C x) const {
    const C v = x < lo ? lo : x;
    return v > hi ? hi : v;
  }
};

// The bound in input `index`, or `fallback` when the input is omitted.
template <typename T>
absl::StatusOr<ComputeOf<T>> Bound(const KernelContext& ctx, int index, ElementType type, ComputeOf<T> fallback,
                                   const std::string& label) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr || t->empty()) return fallback;
  const char* name = index == 1 ? "min" : "max";
  if (t->type() != type)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " has type ", ElementTypeName(t->type()),
                                                   " but input has type ", ElementTypeName(type)));
  if (t->num_elements() != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " must be a scalar, got shape ",
                                                   ShapeToString(t->shape())));
  return Arith<T>::Load(t->data<StorageOf<T>>()[0]);
}

template <typename T>
void ClipRun(KernelContext& ctx, const Tensor& x, Tensor& out, ComputeOf<T> lo, ComputeOf<T> hi) {
  const ClipFn<ComputeOf<T>> fn{lo, hi};
  MapUnary(x.data<StorageOf<T>>(), out.data<StorageOf<T>>(), x.num_elements(), ctx.threads(), kCheapOpGrain,
           [fn](StorageOf<T> v) { return Arith<T>::Store(fn(Arith<T>::Load(v))); });
}

}  // namespace

KernelFactory ClipAttributeKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    auto lo = info.attrs().GetFloat("min", std::numeric_limits<float>::lowest());
    auto hi = info.attrs().GetFloat("max", std::numeric_limits<float>::max());
    if (!lo.ok()) return Annotate(lo.status(), label);
    if (!hi.ok()) return Annotate(hi.status(), label);
    return MakeKernel([label, lo = *lo, hi = *hi](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
      return VisitType(FloatTypes{}, x->type(), label + ": input 0", [&](auto tag) -> absl::Status {
        using T = typename decltype(tag)::type;
        using C = ComputeOf<T>;
        ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x->type(), x->shape()));
        ClipRun<T>(ctx, *x, *out, static_cast<C>(lo), static_cast<C>(hi));
        return absl::OkStatus();
      });
    });
  };
}

KernelFactory ClipInputKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
      return VisitType(NumericTypes{}, x->type(), label + ": input 0", [&](auto tag) -> absl::Status {
        using T = typename decltype(tag)::type;
        using C = ComputeOf<T>;
        // Half types compute in float, so their own range bounds the defaults.
        const C lowest = kIsFloat<T> ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
        const C highest = kIsFloat<T> ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
        ASSIGN_OR_RETURN(const C lo, Bound<T>(ctx, 1, x->type(), lowest, label));
        ASSIGN_OR_RETURN(const C hi, Bound<T>(ctx, 2, x->type(), highest, label));
        ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, x->type(), x->shape()));
        ClipRun<T>(ctx, *x, *out, lo, hi);
        return absl::OkStatus();
      });
    });
  };
}

}  // namespace attune::elementwise
