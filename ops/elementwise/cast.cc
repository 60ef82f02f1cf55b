// Cast and CastLike between every type a tensor holds: the numeric types and
// bool (cast_element.h has the rules) and the narrow float8, float4 and 4-
// and 2-bit integer types (cast_narrow.cc; `saturate` and `round_mode`
// concern those).
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "ops/common/half_convert.h"
#include "ops/common/node_label.h"
#include "ops/elementwise/cast_element.h"
#include "ops/elementwise/cast_narrow.h"
#include "ops/elementwise/kernels.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {
namespace {

// Names of the ONNX types Attune cannot hold, for a clearer error.
const char* UnsupportedTypeName(int64_t code) {
  switch (code) {
    case 8: return "string";
    case 14: return "complex64";
    case 15: return "complex128";
    default: return nullptr;
  }
}

absl::Status RunCast(KernelContext& ctx, const std::string& label, ElementType to,
                     const NarrowCastOptions& options) {
  ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
  if (x->type() == to) {
    ctx.SetOutput(0, *x);  // same type: share the buffer
    return absl::OkStatus();
  }
  if (IsNarrowType(x->type()) || IsNarrowType(to)) return CastWithNarrowType(ctx, *x, to, options, label);
  // float16 ↔ float32, the casts at a float16 graph's edges and around its
  // products: the hardware conversion, same values as ConvertElement.
  if (x->type() == ElementType::kFloat16 && to == ElementType::kFloat32) {
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, to, x->shape()));
    WidenHalf(x->data<uint16_t>(), x->num_elements(), out->data<float>(), ctx.threads());
    return absl::OkStatus();
  }
  if (x->type() == ElementType::kFloat32 && to == ElementType::kFloat16) {
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, to, x->shape()));
    NarrowToHalf(x->data<float>(), x->num_elements(), out->data<uint16_t>(), ctx.threads());
    return absl::OkStatus();
  }
  return VisitType(AllTypes{}, x->type(), label + ": input 0", [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    return VisitType(AllTypes{}, to, label + ": target type", [&](auto to_tag) -> absl::Status {
      using To = typename decltype(to_tag)::type;
      ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, to, x->shape()));
      MapUnary(x->data<StorageOf<From>>(), out->data<StorageOf<To>>(), x->num_elements(), ctx.threads(),
               kCheapOpGrain, [](StorageOf<From> v) { return ConvertElement<From, To>(v); });
      return absl::OkStatus();
    });
  });
}

// The target type must be one Attune holds; known ONNX types it cannot hold
// are Unimplemented, unknown codes are a bad model.
absl::StatusOr<ElementType> CheckTarget(int64_t code, const std::string& label) {
  if (code > 0 && code <= 64 && IsSupportedElementType(static_cast<int32_t>(code)))
    return static_cast<ElementType>(code);
  if (const char* name = UnsupportedTypeName(code))
    return absl::UnimplementedError(absl::StrCat(label, ": casting to ", name, " is not supported"));
  return absl::InvalidArgumentError(absl::StrCat(label, ": ", code, " is not an ONNX tensor data type"));
}

absl::StatusOr<NarrowCastOptions> ReadOptions(const KernelInfo& info, const std::string& label) {
  NarrowCastOptions options;
  auto saturate = info.attrs().GetInt("saturate", 1);
  if (!saturate.ok() || (*saturate != 0 && *saturate != 1))
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute saturate must be 0 or 1"));
  options.saturate = *saturate != 0;
  auto mode = info.attrs().GetString("round_mode", "up");
  if (!mode.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": ", mode.status().message()));
  if (*mode == "up") {
    options.rounding = E8M0Rounding::kUp;
  } else if (*mode == "down") {
    options.rounding = E8M0Rounding::kDown;
  } else if (*mode == "nearest") {
    options.rounding = E8M0Rounding::kNearest;
  } else {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": attribute round_mode is '", *mode, "'; expected up, down or nearest"));
  }
  return options;
}

}  // namespace

KernelFactory CastKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    auto to = info.attrs().GetInt("to");
    if (!to.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": ", to.status().message()));
    ASSIGN_OR_RETURN(const ElementType target, CheckTarget(*to, label));
    ASSIGN_OR_RETURN(const NarrowCastOptions options, ReadOptions(info, label));
    return MakeKernel([label, target, options](KernelContext& ctx) { return RunCast(ctx, label, target, options); });
  };
}

KernelFactory BitCastKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    auto to = info.attrs().GetInt("to");
    if (!to.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": ", to.status().message()));
    ASSIGN_OR_RETURN(const ElementType target, CheckTarget(*to, label));
    return MakeKernel([label, target](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* x, RequiredInput(ctx, 0, label));
      // A tensor holds the 4- and 2-bit types one per byte, so their bits are not the file's.
      const bool packed = ElementsPerFileByte(x->type()) > 1 || ElementsPerFileByte(target) > 1;
      if (packed || ElementSize(x->type()) != ElementSize(target))
        return absl::InvalidArgumentError(absl::StrCat(label, ": input 0 of type ", ElementTypeName(x->type()),
                                                       " cannot be reinterpreted as ", ElementTypeName(target),
                                                       " (the bit widths must be equal)"));
      ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, target, x->shape()));
      if (x->byte_size() > 0) std::memcpy(out->raw_data(), x->raw_data(), x->byte_size());
      if (target == ElementType::kBool) {
        for (uint8_t& b : out->values<uint8_t>()) b = b != 0;  // a bool byte is 0 or 1
      }
      return absl::OkStatus();
    });
  };
}

KernelFactory CastLikeKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    ASSIGN_OR_RETURN(const NarrowCastOptions options, ReadOptions(info, label));
    return MakeKernel([label, options](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* target, RequiredInput(ctx, 1, label));
      return RunCast(ctx, label, target->type(), options);
    });
  };
}

}  // namespace attune::elementwise
