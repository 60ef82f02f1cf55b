// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: bool output, numpy
// broadcasting; half types compare as float (so NaN is unequal to itself).
#include "ops/common/node_label.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/kernels.h"

namespace attune::elementwise {
namespace {

struct EqualFn {
  template <typename C>
  bool operator()(C a, C b) const { return a == b; }
};
struct LessFn {
  template <typename C>
  bool operator()(C a, C b) const { return a < b; }
};
struct GreaterFn {
  template <typename C>
  bool operator()(C a, C b) const { return a > b; }
};
struct LessOrEqualFn {
  template <typename C>
  bool operator()(C a, C b) const { return a <= b; }
};
struct GreaterOrEqualFn {
  template <typename C>
  bool operator()(C a, C b) const { return a >= b; }
};

template <typename Types, typename Fn>
KernelFactory CompareFactory(Types types, Fn fn) {
  return [types, fn](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel(
        [types, fn, label = NodeLabel(info)](KernelContext& ctx) { return RunBinary(ctx, label, types, fn); });
  };
}

}  // namespace

KernelFactory ComparisonKernel(ComparisonOp op) {
  switch (op) {
    case ComparisonOp::kEqual: return CompareFactory(AllTypes{}, EqualFn{});
    case ComparisonOp::kLess: return CompareFactory(NumericTypes{}, LessFn{});
    case ComparisonOp::kGreater: return CompareFactory(NumericTypes{}, GreaterFn{});
    case ComparisonOp::kLessOrEqual: return CompareFactory(NumericTypes{}, LessOrEqualFn{});
    case ComparisonOp::kGreaterOrEqual: return CompareFactory(NumericTypes{}, GreaterOrEqualFn{});
  }
  return nullptr;
}

}  // namespace attune::elementwise
