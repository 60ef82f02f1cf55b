// Ops that describe or create tensors rather than move data: Shape, Size,
// Constant, ConstantOfShape and Range.
#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"

namespace attune {

KernelOr MakeShapeKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t start_attr, info.attrs().GetInt("start", 0));
  std::optional<int64_t> end_attr;
  if (info.attrs().Has("end")) {
    ASSIGN_OR_RETURN(end_attr, info.attrs().GetInt("end"));
  }
  return MakeKernel([start_attr, end_attr](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Shape", "data"));
    const int64_t rank = data->rank();
    // Shape-15: start/end count from the back when negative and are clamped to [0, rank].
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t start = clamp(start_attr), end = clamp(end_attr.value_or(rank));
    const int64_t n = std::max<int64_t>(end - start, 0);
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, ElementType::kInt64, {n}));
    std::copy_n(data->shape().begin() + start, n, out->data<int64_t>());
    return absl::OkStatus();
  });
}

KernelOr MakeSizeKernel(const KernelInfo& info) {
  return MakeKernel([](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Size", "data"));
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, ElementType::kInt64, {}));
    *out->data<int64_t>() = data->num_elements();
    return absl::OkStatus();
  });
}

namespace {

absl::StatusOr<Tensor> ConstantValue(const Attributes& attrs) {
  int given = 0;
  for (const char* name : {"value", "sparse_value", "value_float", "value_floats", "value_int", "value_ints",
                           "value_string", "value_strings"})
    given += attrs.Has(name);
  if (given != 1)
    return absl::InvalidArgumentError(absl::StrCat("Constant: exactly one value attribute must be set, got ", given));
  if (attrs.Has("sparse_value")) return absl::UnimplementedError("Constant: sparse_value is not supported");
  if (attrs.Has("value_string") || attrs.Has("value_strings"))
    return absl::UnimplementedError("Constant: string tensors are not supported");
  if (attrs.Has("value")) return attrs.GetTensor("value");
  if (attrs.Has("value_float")) {
    ASSIGN_OR_RETURN(const float v, attrs.GetFloat("value_float"));
    return Tensor::Scalar(v);
  }
  if (attrs.Has("value_int")) {
    ASSIGN_OR_RETURN(const int64_t v, attrs.GetInt("value_int"));
    return Tensor::Scalar(v);
  }
  if (attrs.Has("value_floats")) {
    ASSIGN_OR_RETURN(std::vector<float> v, attrs.GetFloats("value_floats"));
    return Tensor::FromVector<float>({static_cast<int64_t>(v.size())}, v);
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetInts("value_ints"));
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

template <typename U>
void FillWith(void* dst, int64_t n, const void* value) {
  U v;
  std::memcpy(&v, value, sizeof(U));
  std::fill_n(static_cast<U*>(dst), n, v);
}

}  // namespace

KernelOr MakeConstantKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(Tensor value, ConstantValue(info.attrs()));
  return MakeKernel([value](KernelContext& ctx) -> absl::Status {
    ctx.SetOutput(0, value);
    return absl::OkStatus();
  });
}

KernelOr MakeConstantOfShapeKernel(const KernelInfo& info) {
  Tensor value = Tensor::Scalar(0.0f);
  if (info.attrs().Has("value")) {
    ASSIGN_OR_RETURN(value, info.attrs().GetTensor("value"));
    if (value.num_elements() != 1)
      return absl::InvalidArgumentError(
          absl::StrCat("ConstantOfShape: 'value' must hold one element, got ", value.DebugString()));
  }
  return MakeKernel([value](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 0, "ConstantOfShape", "input"));
    ASSIGN_OR_RETURN(std::vector<int64_t> shape,
                     ReadIndexVector(*shape_t, "ConstantOfShape: input 'input'", IndexTypes::kInt64Only));
    for (int64_t d : shape)
      if (d < 0)
        return absl::InvalidArgumentError(absl::StrCat("ConstantOfShape: negative dim ", d, " in ", ShapeToString(shape)));
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, value.type(), shape));
    const int64_t n = out->num_elements();
    switch (ElementSize(value.type())) {
      case 1: FillWith<uint8_t>(out->raw_data(), n, value.raw_data()); break;
      case 2: FillWith<uint16_t>(out->raw_data(), n, value.raw_data()); break;
      case 4: FillWith<uint32_t>(out->raw_data(), n, value.raw_data()); break;
      case 8: FillWith<uint64_t>(out->raw_data(), n, value.raw_data()); break;
      default: return absl::InvalidArgumentError("ConstantOfShape: unsupported value type");
    }
    return absl::OkStatus();
  });
}

namespace {

// Range's element count, max(ceil((limit - start) / delta), 0), computed without overflow.
absl::StatusOr<int64_t> RangeCountInt(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0) return absl::InvalidArgumentError("Range: delta is 0");
  const __int128 span = static_cast<__int128>(limit) - start;
  if ((span > 0) != (delta > 0) || span == 0) return 0;
  const __int128 d = delta, n = (span + d + (delta > 0 ? -1 : 1)) / d;
  if (n > std::numeric_limits<int64_t>::max()) return absl::InvalidArgumentError("Range: element count overflows");
  return static_cast<int64_t>(n);
}

absl::StatusOr<int64_t> RangeCountFloat(double start, double limit, double delta) {
  if (delta == 0) return absl::InvalidArgumentError("Range: delta is 0");
  const double n = std::ceil((limit - start) / delta);
  if (std::isnan(n)) return absl::InvalidArgumentError("Range: start, limit or delta is not a number");
  if (n <= 0) return 0;
  if (!(n < 9.2e18)) return absl::InvalidArgumentError("Range: element count overflows");
  return static_cast<int64_t>(n);
}

template <typename T, typename Compute, typename ToT>
absl::Status RangeTyped(KernelContext& ctx, const Tensor& s, const Tensor& l, const Tensor& d, ToT to_t) {
  const Compute start = static_cast<Compute>(s.data<T>()[0]);
  const Compute limit = static_cast<Compute>(l.data<T>()[0]);
  const Compute delta = static_cast<Compute>(d.data<T>()[0]);
  int64_t n = 0;
  if constexpr (std::is_integral_v<Compute>) {
    ASSIGN_OR_RETURN(n, RangeCountInt(start, limit, delta));
  } else {
    ASSIGN_OR_RETURN(n, RangeCountFloat(start, limit, delta));
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, s.type(), {n}));
  T* o = out->data<T>();
  for (int64_t i = 0; i < n; ++i) o[i] = to_t(start + static_cast<Compute>(i) * delta);
  return absl::OkStatus();
}

// Half-precision Range: computed in double, each value rounded once.
template <typename T, typename FromT, typename ToT>
absl::Status RangeHalf(KernelContext& ctx, const Tensor& s, const Tensor& l, const Tensor& d, FromT from, ToT to) {
  const double start = from(s.data<T>()[0]), limit = from(l.data<T>()[0]), delta = from(d.data<T>()[0]);
  ASSIGN_OR_RETURN(const int64_t n, RangeCountFloat(start, limit, delta));
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, s.type(), {n}));
  T* o = out->data<T>();
  for (int64_t i = 0; i < n; ++i) o[i] = to(static_cast<float>(start + static_cast<double>(i) * delta));
  return absl::OkStatus();
}

absl::Status RangeRun(KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* s, RequiredInput(ctx, 0, "Range", "start"));
  ASSIGN_OR_RETURN(const Tensor* l, RequiredInput(ctx, 1, "Range", "limit"));
  ASSIGN_OR_RETURN(const Tensor* d, RequiredInput(ctx, 2, "Range", "delta"));
  for (const Tensor* t : {s, l, d})
    if (t->num_elements() != 1 || t->rank() > 1 || t->type() != s->type())
      return absl::InvalidArgumentError(absl::StrCat("Range: start, limit and delta must be scalars of one type, got ",
                                                     s->DebugString(), ", ", l->DebugString(), ", ", d->DebugString()));
  switch (s->type()) {
    case ElementType::kFloat32: return RangeTyped<float, double>(ctx, *s, *l, *d, [](double v) { return static_cast<float>(v); });
    case ElementType::kFloat64: return RangeTyped<double, double>(ctx, *s, *l, *d, [](double v) { return v; });
    case ElementType::kInt16: return RangeTyped<int16_t, int64_t>(ctx, *s, *l, *d, [](int64_t v) { return static_cast<int16_t>(v); });
    case ElementType::kInt32: return RangeTyped<int32_t, int64_t>(ctx, *s, *l, *d, [](int64_t v) { return static_cast<int32_t>(v); });
    case ElementType::kInt64: return RangeTyped<int64_t, int64_t>(ctx, *s, *l, *d, [](int64_t v) { return v; });
    case ElementType::kFloat16: return RangeHalf<Float16>(ctx, *s, *l, *d, HalfToFloat, FloatToHalf);
    case ElementType::kBFloat16: return RangeHalf<BFloat16>(ctx, *s, *l, *d, BFloat16ToFloat, FloatToBFloat16);
    default:
      return absl::InvalidArgumentError(absl::StrCat("Range: unsupported type ", s->DebugString()));
  }
}

}  // namespace

KernelOr MakeRangeKernel(const KernelInfo& info) { return MakeKernel(RangeRun); }

}  // namespace attune
