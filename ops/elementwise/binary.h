// Binary element-wise ops over broadcast inputs: the loop and the common
// "two inputs of one type, output of that type or bool" kernel body.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/broadcast.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/kernel.h"

namespace attune::elementwise {

/// out[i] = fn(a[ia], b[ib]) over the plan's output; A, B, O are storage types.
/// The four inner loops (both advance, one repeats, both repeat) are plain
/// loops the compiler vectorises when fn is simple.
template <typename A, typename B, typename O, typename Fn>
void BroadcastBinary(const BroadcastPlan& plan, const A* a, const B* b, O* out, int threads, int64_t grain,
                     const Fn& fn) {
  const bool step_a = plan.inner_step(0) != 0;
  const bool step_b = plan.inner_step(1) != 0;
  ParallelForRange(plan.num_elements(), grain, threads, [&](int64_t begin, int64_t end) {
    plan.ForEachRun<2>(begin, end, [&](const std::array<int64_t, 2>& off, int64_t o, int64_t n) {
      const A* pa = a + off[0];
      const B* pb = b + off[1];
      O* po = out + o;
      if (step_a && step_b) {
        for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], pb[i]);
      } else if (step_b) {
        const A x = *pa;
        for (int64_t i = 0; i < n; ++i) po[i] = fn(x, pb[i]);
      } else if (step_a) {
        const B y = *pb;
        for (int64_t i = 0; i < n; ++i) po[i] = fn(pa[i], y);
      } else {
        std::fill_n(po, n, fn(*pa, *pb));
      }
    });
  });
}

/// The two inputs of a binary op, checked to be present.
absl::StatusOr<std::array<const Tensor*, 2>> BinaryInputs(const KernelContext& ctx, const std::string& label);

/// The output type of fn applied to T's compute type: bool for predicates, else T.
template <typename T, typename Fn>
using BinaryResultType = std::conditional_t<
    std::is_same_v<std::invoke_result_t<const Fn&, ComputeOf<T>, ComputeOf<T>>, bool>, bool, T>;

/// Runs fn (called on compute types, e.g. float for Float16) on inputs 0 and 1,
/// which must have the same type, one of `types`, and broadcastable shapes.
template <typename... Ts, typename Fn>
absl::Status RunBinary(KernelContext& ctx, const std::string& label, TypeList<Ts...> types, const Fn& fn,
                       int64_t grain = kCheapOpGrain) {
  ASSIGN_OR_RETURN(auto inputs, BinaryInputs(ctx, label));
  const Tensor& a = *inputs[0];
  const Tensor& b = *inputs[1];
  if (a.type() != b.type())
    return absl::InvalidArgumentError(absl::StrCat(label, ": input 1 has type ", ElementTypeName(b.type()),
                                                   " but input 0 has type ", ElementTypeName(a.type()),
                                                   "; they must match"));
  auto plan = BroadcastPlan::Create({a.shape(), b.shape()});
  if (!plan.ok()) return Annotate(plan.status(), label);
  return VisitType(types, a.type(), label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    using R = BinaryResultType<T, Fn>;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, ElementTypeOf<R>::value, plan->output_shape()));
    BroadcastBinary(*plan, a.data<StorageOf<T>>(), b.data<StorageOf<T>>(), out->data<StorageOf<R>>(), ctx.threads(),
                    grain, [&fn](StorageOf<T> x, StorageOf<T> y) {
                      return Arith<R>::Store(
                          static_cast<ComputeOf<R>>(fn(Arith<T>::Load(x), Arith<T>::Load(y))));
                    });
    return absl::OkStatus();
  });
}

}  // namespace attune::elementwise
