// Min, Max, Sum, Mean over one or more inputs with numpy broadcasting. Inputs
// are folded pairwise (broadcasting is associative in shape); Mean divides the
// sum once at the end.
#include <cmath>
#include <type_traits>
#include <vector>

#include "ops/common/node_label.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

// NaN in either operand gives NaN, as numpy's minimum/maximum do
// (a != a only for NaN; integers never take that branch).
struct MinFn {
  template <typename C>
  C operator()(C a, C b) const { return (a < b || a != a) ? a : b; }
};
struct MaxFn {
  template <typename C>
  C operator()(C a, C b) const { return (a > b || a != a) ? a : b; }
};
struct SumFn {
  template <typename C>
  C operator()(C a, C b) const { return a + b; }
};

// dst = fn(a, b) with broadcasting; dst already has the broadcast shape.
template <typename T, typename Fn>
void Combine(const KernelContext& ctx, const BroadcastPlan& plan, const Tensor& a, const Tensor& b, Tensor& dst,
             const Fn& fn) {
  BroadcastBinary(plan, a.data<StorageOf<T>>(), b.data<StorageOf<T>>(), dst.data<StorageOf<T>>(), ctx.threads(),
                  kCheapOpGrain, [&fn](StorageOf<T> x, StorageOf<T> y) {
                    return Arith<T>::Store(fn(Arith<T>::Load(x), Arith<T>::Load(y)));
                  });
}

template <typename Types, typename Fn>
absl::Status RunVariadic(KernelContext& ctx, const std::string& label, Types types, const Fn& fn, bool mean) {
  std::vector<const Tensor*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor* t = ctx.input(i);
    if (t == nullptr || t->empty())
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " is missing"));
    if (!inputs.empty() && t->type() != inputs[0]->type())
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " has type ", ElementTypeName(t->type()),
                                                     " but input 0 has type ",
                                                     ElementTypeName(inputs[0]->type()), "; they must match"));
    inputs.push_back(t);
  }
  if (inputs.empty()) return absl::InvalidArgumentError(label + ": needs at least one input");
  return VisitType(types, inputs[0]->type(), label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    // Check all shapes up front so the error names every input shape.
    std::vector<std::span<const int64_t>> shapes;
    for (const Tensor* t : inputs) shapes.push_back(t->shape());
    auto out_shape = BroadcastShapes(shapes);
    if (!out_shape.ok()) return Annotate(out_shape.status(), label);

    if (inputs.size() == 1) {
      ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, inputs[0]->type(), inputs[0]->shape()));
      std::copy_n(inputs[0]->data<StorageOf<T>>(), inputs[0]->num_elements(), out->data<StorageOf<T>>());
      return absl::OkStatus();
    }
    // Intermediate results live in scratch tensors; the last step writes the
    // output directly unless Mean still has to divide.
    Tensor acc;
    const Tensor* left = inputs[0];
    for (size_t i = 1; i < inputs.size(); ++i) {
      ASSIGN_OR_RETURN(BroadcastPlan plan, BroadcastPlan::Create({left->shape(), inputs[i]->shape()}));
      const bool to_output = i + 1 == inputs.size() && !mean;
      if (to_output) {
        ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, left->type(), plan.output_shape()));
        Combine<T>(ctx, plan, *left, *inputs[i], *out, fn);
      } else {
        ASSIGN_OR_RETURN(Tensor next, ctx.AllocateScratch(left->type(), plan.output_shape()));
        Combine<T>(ctx, plan, *left, *inputs[i], next, fn);
        acc = std::move(next);
        left = &acc;
      }
    }
    if (!mean) return absl::OkStatus();
    if constexpr (kIsFloat<T>) {
      ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, acc.type(), acc.shape()));
      const auto n = static_cast<ComputeOf<T>>(inputs.size());
      MapUnary(acc.data<StorageOf<T>>(), out->data<StorageOf<T>>(), acc.num_elements(), ctx.threads(),
               kCheapOpGrain, [n](StorageOf<T> v) { return Arith<T>::Store(Arith<T>::Load(v) / n); });
      return absl::OkStatus();
    } else {
      return absl::InternalError(label + ": Mean on a non-float type");
    }
  });
}

template <typename Types, typename Fn>
KernelFactory VariadicFactory(Types types, Fn fn, bool mean) {
  return [types, fn, mean](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([types, fn, mean, label = NodeLabel(info)](KernelContext& ctx) {
      return RunVariadic(ctx, label, types, fn, mean);
    });
  };
}

}  // namespace

KernelFactory VariadicKernel(VariadicOp op) {
  switch (op) {
    case VariadicOp::kMin: return VariadicFactory(NumericTypes{}, MinFn{}, false);
    case VariadicOp::kMax: return VariadicFactory(NumericTypes{}, MaxFn{}, false);
    case VariadicOp::kSum: return VariadicFactory(FloatTypes{}, SumFn{}, false);
    case VariadicOp::kMean: return VariadicFactory(FloatTypes{}, SumFn{}, true);
  }
  return nullptr;
}

}  // namespace attune::elementwise
