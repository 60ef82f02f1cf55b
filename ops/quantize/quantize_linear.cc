// QuantizeLinear and DequantizeLinear (opsets 10 to 25): per tensor, per axis
// (13) and per block along an axis (21); int8, uint8, int16 and uint16
// quantized values; float32, float16 and bfloat16 scales. Quantizing divides
// x by its scale in the type both share (float32, or float16 / bfloat16 when
// x and the scale are both that type, as ONNX's reference computes), rounds
// half to even, adds the zero point and saturates; dequantizing computes
// (x - zero_point) · scale in float32 and rounds once to the output type.
// The narrow types (opset 21 on: int4, uint4, int2, uint2, the float8 formats
// and float4e2m1) are held one element per byte: integer ones quantize as the
// wider integers do within their range; float ones add the zero point to the
// quotient and round it to the format (saturating unless saturate=0).
#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/ir/narrow_types.h"
#include "core/ir/round_through_type.h"
#include "ops/common/node_label.h"
#include "ops/common/parallel.h"
#include "ops/quantize/kernels.h"
#include "ops/quantize/quantize_params.h"

namespace attune::quantize {
namespace {

bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16;
}

// What both ops read from their node once: attributes and the types they fix.
struct QdqAttributes {
  int opset = 0;
  int64_t axis = 1;
  int64_t block_size = 0;
  int64_t output_dtype = 0;  // 0: not given
  bool saturate = true;      // float8 and float4 outputs only
};

// The narrow types QuantizeLinear / DequantizeLinear take (float8e8m0 is a scale format, not a quantized one).
bool IsNarrowQuantType(ElementType t) { return IsNarrowType(t) && t != kFloat8E8M0; }

// The integer range of a narrow integer type; nullopt for the float formats.
std::optional<IntRange> NarrowIntRange(ElementType t) {
  if (t == kInt4) return IntRange{-8, 7};
  if (t == kUint4) return IntRange{0, 15};
  if (t == kInt2) return IntRange{-2, 1};
  if (t == kUint2) return IntRange{0, 3};
  return std::nullopt;
}

absl::StatusOr<QdqAttributes> ReadQdqAttributes(const KernelInfo& info, const std::string& label) {
  QdqAttributes a;
  a.opset = info.opset;
  auto axis = info.attrs().GetInt("axis", 1);
  auto block = info.attrs().GetInt("block_size", 0);
  auto dtype = info.attrs().GetInt("output_dtype", 0);
  if (!axis.ok() || !block.ok() || !dtype.ok())
    return absl::InvalidArgumentError(absl::StrCat(label, ": attributes axis, block_size and output_dtype are ints"));
  a.axis = *axis;
  a.block_size = *block;
  a.output_dtype = *dtype;
  auto saturate = info.attrs().GetInt("saturate", 1);
  if (!saturate.ok()) return absl::InvalidArgumentError(absl::StrCat(label, ": attribute saturate is an int"));
  a.saturate = *saturate != 0;
  if (a.opset < 21 && (info.attrs().Has("block_size") || info.attrs().Has("output_dtype")))
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": block_size and output_dtype arrive with opset 21; the model imports opset ", a.opset));
  if (a.block_size < 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": block_size ", a.block_size, " is negative"));
  return a;
}

// Scale and zero point of one run, with the layout they have over x.
struct RunParams {
  ScaleLayout layout;
  std::vector<float> scales;
  std::vector<int32_t> zero_points;  // empty: all zero
  std::vector<float> narrow_zero_points;  // a narrow zero point's values; empty: none
};

absl::StatusOr<RunParams> ReadRunParams(const std::string& label, const QdqAttributes& attrs, const Tensor& x,
                                        const Tensor& scale, const Tensor* zero_point) {
  RunParams p;
  if (attrs.opset < 13 && scale.num_elements() != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": scale has ", scale.num_elements(),
                                                   " elements; opset ", attrs.opset, " quantizes per tensor only"));
  ASSIGN_OR_RETURN(p.layout, PlanScaleLayout(label, x.shape(), scale.shape(), attrs.axis, attrs.block_size));
  ASSIGN_OR_RETURN(p.scales, ReadScales(scale, label + ": scale (input 1)"));
  if (zero_point != nullptr) {
    // A per-tensor scale and zero point may each be a scalar or one element of rank 1.
    const bool one_each = zero_point->num_elements() == 1 && scale.num_elements() == 1;
    if (zero_point->shape() != scale.shape() && !one_each)
      return absl::InvalidArgumentError(absl::StrCat(label, ": zero point (input 2) has ", zero_point->num_elements(),
                                                     " elements in a shape other than the scale's"));
    if (IsNarrowQuantType(zero_point->type())) {
      const uint8_t* bits = zero_point->data<uint8_t>();
      for (int64_t i = 0; i < zero_point->num_elements(); ++i)
        p.narrow_zero_points.push_back(NarrowToFloat(zero_point->type(), bits[i]));
    } else {
      ASSIGN_OR_RETURN(p.zero_points, ReadIntegers(*zero_point, label + ": zero point (input 2)"));
    }
  }
  return p;
}

// Calls fn(flat_index, scale_index) for every element of x, rows split across threads.
template <typename Fn>
void ForEachElement(const ScaleLayout& l, int threads, const Fn& fn) {
  const int64_t rows = l.outer * l.axis_len;
  ParallelForRange(rows, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(1, l.inner)), threads,
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const int64_t o = r / l.axis_len, a = r % l.axis_len;
                       for (int64_t i = 0; i < l.inner; ++i) fn(r * l.inner + i, l.ScaleIndex(o, a, i));
                     }
                   });
}

template <typename T>
float LoadFloat(const T& v) {
  if constexpr (std::is_same_v<T, Float16>) return HalfToFloat(v);
  else if constexpr (std::is_same_v<T, BFloat16>) return BFloat16ToFloat(v);
  else return static_cast<float>(v);
}

// x / scale: int32 in double; a float x in float32, rounded to x's 16-bit type
// when the scale has that type too (round_to).
template <typename X>
float Quotient(X v, float scale, ElementType round_to) {
  if constexpr (std::is_same_v<X, int32_t>) {
    return static_cast<float>(static_cast<double>(v) / static_cast<double>(scale));
  } else {
    return RoundThroughType(round_to, LoadFloat(v) / scale);
  }
}

template <typename X, typename Q>
void QuantizeTyped(const Tensor& x, ElementType scale_type, const RunParams& p, IntRange range, Tensor* y,
                   int threads) {
  const X* in = x.data<X>();
  Q* out = y->data<Q>();
  // The quotient is rounded to x's 16-bit type when the scale has that type too.
  const ElementType round_to = x.type() == scale_type ? x.type() : ElementType::kFloat32;
  ForEachElement(p.layout, threads, [&](int64_t e, int64_t s) {
    const int32_t zp = p.zero_points.empty() ? 0 : p.zero_points[s];
    const float q = Quotient(in[e], p.scales[s], round_to);
    out[e] = static_cast<Q>(QuantizeValue(q, zp, range));
  });
}

template <typename X>
void QuantizeToNarrow(const Tensor& x, ElementType scale_type, const RunParams& p, bool saturate, Tensor* y,
                      int threads) {
  const X* in = x.data<X>();
  uint8_t* out = y->data<uint8_t>();
  const ElementType out_type = y->type();
  const std::optional<IntRange> range = NarrowIntRange(out_type);
  const ElementType round_to = x.type() == scale_type ? x.type() : ElementType::kFloat32;
  ForEachElement(p.layout, threads, [&](int64_t e, int64_t s) {
    const float zp = p.narrow_zero_points.empty() ? 0.0f : p.narrow_zero_points[s];
    const float q = Quotient(in[e], p.scales[s], round_to);
    out[e] = range ? IntegerToNarrow(out_type, QuantizeValue(q, static_cast<int32_t>(zp), *range))
                   : FloatToNarrow(out_type, q + zp, saturate);
  });
}

template <typename X>
absl::Status QuantizeTo(const Tensor& x, ElementType scale_type, const RunParams& p, ElementType out_type, Tensor* y,
                        int threads, const std::string& label, bool saturate) {
  if (IsNarrowQuantType(out_type)) {
    QuantizeToNarrow<X>(x, scale_type, p, saturate, y, threads);
    return absl::OkStatus();
  }
  ASSIGN_OR_RETURN(IntRange range, RangeOf(out_type, label + ": output"));
  switch (out_type) {
    case ElementType::kInt8: QuantizeTyped<X, int8_t>(x, scale_type, p, range, y, threads); break;
    case ElementType::kUint8: QuantizeTyped<X, uint8_t>(x, scale_type, p, range, y, threads); break;
    case ElementType::kInt16: QuantizeTyped<X, int16_t>(x, scale_type, p, range, y, threads); break;
    default: QuantizeTyped<X, uint16_t>(x, scale_type, p, range, y, threads); break;
  }
  return absl::OkStatus();
}

// The output type of QuantizeLinear: the zero point's, else output_dtype, else uint8.
absl::StatusOr<ElementType> QuantizedOutputType(const std::string& label, const QdqAttributes& a,
                                                std::optional<ElementType> zero_point_type) {
  const ElementType from_attr = static_cast<ElementType>(a.output_dtype);
  if (zero_point_type && a.output_dtype != 0 && *zero_point_type != from_attr)
    return absl::InvalidArgumentError(absl::StrCat(label, ": zero point (input 2) has type ",
                                                   ElementTypeName(*zero_point_type), " but output_dtype is ",
                                                   ElementTypeName(from_attr)));
  const ElementType t = zero_point_type ? *zero_point_type : a.output_dtype != 0 ? from_attr : ElementType::kUint8;
  if (IsNarrowQuantType(t)) {
    if (a.opset < 21)
      return absl::InvalidArgumentError(absl::StrCat(label, ": output type ", ElementTypeName(t),
                                                     " arrives with opset 21; the model imports opset ", a.opset));
    return t;
  }
  RETURN_IF_ERROR(RangeOf(t, label + ": output").status());
  return t;
}

class QuantizeLinearKernelImpl final : public Kernel {
 public:
  QuantizeLinearKernelImpl(std::string label, QdqAttributes attrs) : label_(std::move(label)), attrs_(attrs) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (x == nullptr || scale == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": inputs x and y_scale are required"));
    std::optional<ElementType> zp_type;
    if (zp != nullptr) zp_type = zp->type();
    ASSIGN_OR_RETURN(ElementType out_type, QuantizedOutputType(label_, attrs_, zp_type));
    ASSIGN_OR_RETURN(RunParams p, ReadRunParams(label_, attrs_, *x, *scale, zp));
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, out_type, x->shape()));
    const int threads = ctx.threads();
    switch (x->type()) {
      case ElementType::kFloat32: return QuantizeTo<float>(*x, scale->type(), p, out_type, y, threads, label_, attrs_.saturate);
      case ElementType::kFloat16: return QuantizeTo<Float16>(*x, scale->type(), p, out_type, y, threads, label_, attrs_.saturate);
      case ElementType::kBFloat16: return QuantizeTo<BFloat16>(*x, scale->type(), p, out_type, y, threads, label_, attrs_.saturate);
      case ElementType::kInt32: return QuantizeTo<int32_t>(*x, scale->type(), p, out_type, y, threads, label_, attrs_.saturate);
      default:
        return absl::InvalidArgumentError(absl::StrCat(label_, ": input x has type ", ElementTypeName(x->type()),
                                                       "; QuantizeLinear takes float32, float16, bfloat16 or int32"));
    }
  }

 private:
  std::string label_;
  QdqAttributes attrs_;
};

template <typename Q, typename Y>
void DequantizeTyped(const Tensor& x, const RunParams& p, Tensor* y, int threads) {
  const Q* in = x.data<Q>();
  Y* out = y->data<Y>();
  ForEachElement(p.layout, threads, [&](int64_t e, int64_t s) {
    const float zp = p.zero_points.empty() ? 0.0f : static_cast<float>(p.zero_points[s]);
    const float v = (static_cast<float>(in[e]) - zp) * p.scales[s];
    if constexpr (std::is_same_v<Y, Float16>) out[e] = FloatToHalf(v);
    else if constexpr (std::is_same_v<Y, BFloat16>) out[e] = FloatToBFloat16(v);
    else out[e] = v;
  });
}

template <typename Y>
void DequantizeNarrowTyped(const Tensor& x, const RunParams& p, Tensor* y, int threads) {
  const uint8_t* in = x.data<uint8_t>();
  Y* out = y->data<Y>();
  ForEachElement(p.layout, threads, [&](int64_t e, int64_t s) {
    const float zp = p.narrow_zero_points.empty() ? 0.0f : p.narrow_zero_points[s];
    const float v = (NarrowToFloat(x.type(), in[e]) - zp) * p.scales[s];
    if constexpr (std::is_same_v<Y, Float16>) out[e] = FloatToHalf(v);
    else if constexpr (std::is_same_v<Y, BFloat16>) out[e] = FloatToBFloat16(v);
    else out[e] = v;
  });
}

void DequantizeNarrow(const Tensor& x, const RunParams& p, Tensor* y, int threads) {
  switch (y->type()) {
    case ElementType::kFloat16: DequantizeNarrowTyped<Float16>(x, p, y, threads); break;
    case ElementType::kBFloat16: DequantizeNarrowTyped<BFloat16>(x, p, y, threads); break;
    default: DequantizeNarrowTyped<float>(x, p, y, threads); break;
  }
}

template <typename Q>
void DequantizeTo(const Tensor& x, const RunParams& p, Tensor* y, int threads) {
  switch (y->type()) {
    case ElementType::kFloat16: DequantizeTyped<Q, Float16>(x, p, y, threads); break;
    case ElementType::kBFloat16: DequantizeTyped<Q, BFloat16>(x, p, y, threads); break;
    default: DequantizeTyped<Q, float>(x, p, y, threads); break;
  }
}

class DequantizeLinearKernelImpl final : public Kernel {
 public:
  DequantizeLinearKernelImpl(std::string label, QdqAttributes attrs) : label_(std::move(label)), attrs_(attrs) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zp = ctx.input(2);
    if (x == nullptr || scale == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": inputs x and x_scale are required"));
    if (zp != nullptr && zp->type() != x->type())
      return absl::InvalidArgumentError(absl::StrCat(label_, ": zero point (input 2) has type ",
                                                     ElementTypeName(zp->type()), " but x has type ",
                                                     ElementTypeName(x->type())));
    ASSIGN_OR_RETURN(RunParams p, ReadRunParams(label_, attrs_, *x, *scale, zp));
    const ElementType out_type =
        attrs_.output_dtype != 0 ? static_cast<ElementType>(attrs_.output_dtype) : scale->type();
    if (!IsFloatType(out_type))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": output type ", ElementTypeName(out_type),
                                                     " is not float32, float16 or bfloat16"));
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, out_type, x->shape()));
    const int threads = ctx.threads();
    switch (x->type()) {
      case ElementType::kInt8: DequantizeTo<int8_t>(*x, p, y, threads); break;
      case ElementType::kUint8: DequantizeTo<uint8_t>(*x, p, y, threads); break;
      case ElementType::kInt16: DequantizeTo<int16_t>(*x, p, y, threads); break;
      case ElementType::kUint16: DequantizeTo<uint16_t>(*x, p, y, threads); break;
      case ElementType::kInt32: DequantizeTo<int32_t>(*x, p, y, threads); break;
      default:
        if (IsNarrowQuantType(x->type()) && attrs_.opset >= 21) {
          DequantizeNarrow(*x, p, y, threads);
          break;
        }
        return absl::UnimplementedError(absl::StrCat(label_, ": input x has type ", ElementTypeName(x->type()),
                                                     "; DequantizeLinear runs int8, uint8, int16, uint16, int32 and (from opset 21) "
                                                     "the 4-bit, 2-bit, float8 and float4 types"));
    }
    return absl::OkStatus();
  }

 private:
  std::string label_;
  QdqAttributes attrs_;
};

// Load-time checks on what is known before the first run: the types, and the
// scale against x when both are constants (a quantized weight).
absl::Status CheckAtLoad(const KernelInfo& info, const std::string& label, const QdqAttributes& attrs,
                         bool quantize) {
  auto type_of = [&](int i) { return i < info.num_inputs() ? info.input_types[i] : std::nullopt; };
  const bool has_zp = info.num_inputs() > 2 && info.input_present[2];
  if (quantize && has_zp && type_of(2)) RETURN_IF_ERROR(QuantizedOutputType(label, attrs, type_of(2)).status());
  if (quantize && !has_zp) RETURN_IF_ERROR(QuantizedOutputType(label, attrs, std::nullopt).status());
  if (!quantize && has_zp && type_of(0) && type_of(2) && *type_of(0) != *type_of(2))
    return absl::InvalidArgumentError(absl::StrCat(label, ": zero point (input 2) has type ",
                                                   ElementTypeName(*type_of(2)), " but x has type ",
                                                   ElementTypeName(*type_of(0))));
  if (type_of(1) && !IsFloatType(*type_of(1)))
    return absl::InvalidArgumentError(absl::StrCat(label, ": scale (input 1) has type ", ElementTypeName(*type_of(1)),
                                                   "; a scale is float32, float16 or bfloat16"));
  const Tensor* x = info.constant_inputs.size() > 0 ? info.constant_inputs[0] : nullptr;
  const Tensor* scale = info.constant_inputs.size() > 1 ? info.constant_inputs[1] : nullptr;
  const Tensor* zp = has_zp && info.constant_inputs.size() > 2 ? info.constant_inputs[2] : nullptr;
  if (scale != nullptr && x != nullptr) return ReadRunParams(label, attrs, *x, *scale, zp).status();
  return absl::OkStatus();
}

template <typename K>
KernelFactory QdqFactory(bool quantize) {
  return [quantize](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    const std::string label = NodeLabel(info);
    ASSIGN_OR_RETURN(QdqAttributes attrs, ReadQdqAttributes(info, label));
    RETURN_IF_ERROR(CheckAtLoad(info, label, attrs, quantize));
    return std::unique_ptr<Kernel>(std::make_unique<K>(label, attrs));
  };
}

}  // namespace

KernelFactory QuantizeLinearKernel() { return QdqFactory<QuantizeLinearKernelImpl>(true); }
KernelFactory DequantizeLinearKernel() { return QdqFactory<DequantizeLinearKernelImpl>(false); }

}  // namespace attune::quantize
