// Unary element-wise ops: one input, output of the same shape and of the
// input's type (or bool for predicates).
#pragma once

#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/elementwise/vector_math.h"
#include "ops/kernel.h"

namespace attune::elementwise {

/// Input `index`, or InvalidArgument naming it when it is missing.
absl::StatusOr<const Tensor*> RequiredInput(const KernelContext& ctx, int index, const std::string& label);

/// out[i] = fn(in[i]) on storage types, split across threads.
template <typename I, typename O, typename Fn>
void MapUnary(const I* in, O* out, int64_t n, int threads, int64_t grain, const Fn& fn) {
  ParallelForRange(n, grain, threads, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) out[i] = fn(in[i]);
  });
}

template <typename T, typename Fn>
using UnaryResultType =
    std::conditional_t<std::is_same_v<std::invoke_result_t<const Fn&, ComputeOf<T>>, bool>, bool, T>;

/// Runs fn (called on the compute type, e.g. float for Float16) on input 0,
/// whose type must be one of `types`.
template <typename... Ts, typename Fn>
absl::Status RunUnary(KernelContext& ctx, const std::string& label, TypeList<Ts...> types, const Fn& fn,
                      int64_t grain = kCostlyOpGrain) {
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
  return VisitType(types, x->type(), label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    using R = UnaryResultType<T, Fn>;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, ElementTypeOf<R>::value, x->shape()));
    MapUnary(x->data<StorageOf<T>>(), out->data<StorageOf<R>>(), x->num_elements(), ctx.threads(), grain,
             [&fn](StorageOf<T> v) {
               return Arith<R>::Store(static_cast<ComputeOf<R>>(fn(Arith<T>::Load(v))));
             });
    return absl::OkStatus();
  });
}

/// RunUnary, except that a float32 input runs the vectorised kernel of `op`
/// (vector_math.h); the other types keep fn.
template <typename... Ts, typename Fn>
absl::Status RunUnaryVectorised(KernelContext& ctx, const std::string& label, TypeList<Ts...> types, VectorOp op,
                                const Fn& fn) {
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
  if (x->type() != ElementType::kFloat32) return RunUnary(ctx, label, types, fn);
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, x->shape()));
  RunVectorUnary(op, x->data<float>(), out->data<float>(), x->num_elements(), ctx.threads());
  return absl::OkStatus();
}

}  // namespace attune::elementwise
