// Where(condition, X, Y): 3-way numpy broadcasting, any value type (values are
// moved as bytes of the element size, so every type shares four loops).
#include <array>
#include <cstring>

#include "ops/common/broadcast.h"
#include "ops/common/node_label.h"
#include "ops/common/parallel.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

template <typename V, bool kStepC, bool kStepX, bool kStepY>
void SelectRun(const uint8_t* c, const V* x, const V* y, V* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = c[kStepC ? i : 0] != 0 ? x[kStepX ? i : 0] : y[kStepY ? i : 0];
}

template <typename V>
void WhereTyped(const BroadcastPlan& plan, const uint8_t* c, const V* x, const V* y, V* out, int threads) {
  // The eight step combinations as compile-time flags keep each loop simple.
  using RunFn = void (*)(const uint8_t*, const V*, const V*, V*, int64_t);
  static constexpr RunFn kRuns[8] = {
      SelectRun<V, false, false, false>, SelectRun<V, false, false, true>, SelectRun<V, false, true, false>,
      SelectRun<V, false, true, true>,   SelectRun<V, true, false, false>, SelectRun<V, true, false, true>,
      SelectRun<V, true, true, false>,   SelectRun<V, true, true, true>,
  };
  const RunFn run = kRuns[(plan.inner_step(0) ? 4 : 0) | (plan.inner_step(1) ? 2 : 0) | (plan.inner_step(2) ? 1 : 0)];
  ParallelForRange(plan.num_elements(), kCheapOpGrain, threads, [&](int64_t begin, int64_t end) {
    plan.ForEachRun<3>(begin, end, [&](const std::array<int64_t, 3>& off, int64_t o, int64_t n) {
      run(c + off[0], x + off[1], y + off[2], out + o, n);
    });
  });
}

absl::Status RunWhere(KernelContext& ctx, const std::string& label) {
  ASSIGN_OR_RETURN(const Tensor* cond, RequiredInput(ctx, 0, label));
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 1, label));
  ASSIGN_OR_RETURN(const Tensor* y, RequiredInput(ctx, 2, label));
  if (cond->type() != ElementType::kBool)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": condition (input 0) must be bool, got ", ElementTypeName(cond->type())));
  if (x->type() != y->type())
    return absl::InvalidArgumentError(absl::StrCat(label, ": Y (input 2) has type ", ElementTypeName(y->type()),
                                                   " but X (input 1) has type ", ElementTypeName(x->type()),
                                                   "; they must match"));
  auto plan = BroadcastPlan::Create({cond->shape(), x->shape(), y->shape()});
  if (!plan.ok()) return Annotate(plan.status(), label);
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, x->type(), plan->output_shape()));
  const auto* c = cond->data<uint8_t>();
  switch (ElementSize(x->type())) {
    case 1: WhereTyped(*plan, c, x->data<uint8_t>(), y->data<uint8_t>(), out->data<uint8_t>(), ctx.threads()); break;
    case 2: WhereTyped(*plan, c, x->data<uint16_t>(), y->data<uint16_t>(), out->data<uint16_t>(), ctx.threads()); break;
    case 4: WhereTyped(*plan, c, x->data<uint32_t>(), y->data<uint32_t>(), out->data<uint32_t>(), ctx.threads()); break;
    case 8: WhereTyped(*plan, c, x->data<uint64_t>(), y->data<uint64_t>(), out->data<uint64_t>(), ctx.threads()); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat(label, ": value type ", ElementTypeName(x->type()), " is not supported"));
  }
  return absl::OkStatus();
}

}  // namespace

KernelFactory WhereKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) { return RunWhere(ctx, label); });
  };
}

}  // namespace attune::elementwise
