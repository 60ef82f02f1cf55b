// Boolean logic (And, Or, Xor, Not), bitwise integer ops and BitShift.
#include <type_traits>

#include "core/common/escape.h"
#include "ops/common/node_label.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

using BoolType = TypeList<bool>;

struct AndFn {
  template <typename C>
  C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
struct OrFn {
  template <typename C>
  C operator()(C a, C b) const { return static_cast<C>(a | b); }
};
struct XorFn {
  template <typename C>
  C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};

// Shifting by the type's width or more gives 0 (C++ leaves it undefined).
struct ShiftFn {
  bool left = true;
  template <typename C>
  C operator()(C a, C b) const {
    constexpr C kBits = sizeof(C) * 8;
    if (b >= kBits) return 0;
    return left ? static_cast<C>(a << b) : static_cast<C>(a >> b);
  }
};

template <typename Types, typename Fn>
KernelFactory BinaryFactory(Types types, Fn fn) {
  return [types, fn](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel(
        [types, fn, label = NodeLabel(info)](KernelContext& ctx) { return RunBinary(ctx, label, types, fn); });
  };
}

template <typename Types, typename Fn>
KernelFactory UnaryFactory(Types types, Fn fn) {
  return [types, fn](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([types, fn, label = NodeLabel(info)](KernelContext& ctx) {
      return RunUnary(ctx, label, types, fn, kCheapOpGrain);
    });
  };
}

}  // namespace

KernelFactory LogicalKernel(LogicalOp op) {
  switch (op) {
    case LogicalOp::kAnd: return BinaryFactory(BoolType{}, AndFn{});
    case LogicalOp::kOr: return BinaryFactory(BoolType{}, OrFn{});
    case LogicalOp::kXor: return BinaryFactory(BoolType{}, XorFn{});
    case LogicalOp::kBitwiseAnd: return BinaryFactory(IntTypes{}, AndFn{});
    case LogicalOp::kBitwiseOr: return BinaryFactory(IntTypes{}, OrFn{});
    case LogicalOp::kBitwiseXor: return BinaryFactory(IntTypes{}, XorFn{});
  }
  return nullptr;
}

KernelFactory NotKernel() {
  return UnaryFactory(BoolType{}, [](bool v) { return !v; });
}

KernelFactory BitwiseNotKernel() {
  return UnaryFactory(IntTypes{}, [](auto v) { return static_cast<decltype(v)>(~v); });
}

KernelFactory BitShiftKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    auto direction_attr = info.attrs().GetString("direction");
    if (!direction_attr.ok())
      return absl::InvalidArgumentError(absl::StrCat(label, ": ", direction_attr.status().message()));
    const std::string direction = *direction_attr;
    if (direction != "LEFT" && direction != "RIGHT")
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": attribute direction must be LEFT or RIGHT, got ", QuoteName(direction)));
    const ShiftFn fn{direction == "LEFT"};
    return MakeKernel([fn, label](KernelContext& ctx) { return RunBinary(ctx, label, UnsignedIntTypes{}, fn); });
  };
}

}  // namespace attune::elementwise
