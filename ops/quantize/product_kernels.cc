// MatMulInteger, QLinearMatMul and com.microsoft's MatMulIntegerToFloat and
// DynamicQuantizeMatMul: one exact int32 product (integer_matmul.h), then
// nothing, a requantization, or the float epilogue. A constant 2-D B with
// constant zero points is prepared once at load (integer_product.h).
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/quantize/dynamic_quantize.h"
#include "ops/quantize/integer_matmul.h"
#include "ops/quantize/kernels.h"
#include "ops/quantize/quantize_params.h"

namespace attune::quantize {
namespace {

// Where each operand of a product op sits among the node's inputs (-1: none).
struct ProductSlots {
  int a = 0, a_scale = -1, a_zp = -1;
  int b = 1, b_scale = -1, b_zp = -1;
  int y_scale = -1, y_zp = -1, bias = -1;
};

enum class Epilogue { kInt32, kRequantize, kFloat, kDynamicFloat };

const Tensor* Input(const KernelContext& ctx, int slot) { return slot < 0 ? nullptr : ctx.input(slot); }

float ScalarScale(const std::vector<float>& s) { return s.empty() ? 1.0f : s[0]; }

class ProductKernel final : public Kernel {
 public:
  ProductKernel(std::string label, ProductSlots slots, Epilogue epilogue)
      : label_(std::move(label)), slots_(slots), epilogue_(epilogue) {}

  // Prepares B when it and its zero point are constants of a 2-D product.
  absl::Status Prepare(const KernelInfo& info) {
    auto constant = [&](int slot) -> const Tensor* {
      return slot >= 0 && slot < info.num_inputs() ? info.constant_inputs[slot] : nullptr;
    };
    const Tensor* b = constant(slots_.b);
    const bool zp_given = slots_.b_zp >= 0 && slots_.b_zp < info.num_inputs() && info.input_present[slots_.b_zp];
    if (b == nullptr || (zp_given && constant(slots_.b_zp) == nullptr)) return absl::OkStatus();
    if (b->type() != ElementType::kInt8 && b->type() != ElementType::kUint8)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": B has type ", ElementTypeName(b->type()), "; it must be int8 or uint8"));
    if (b->rank() != 2) return absl::OkStatus();
    ASSIGN_OR_RETURN(std::vector<int32_t> zps,
                     ReadZeroPoints(label_, zp_given ? constant(slots_.b_zp) : nullptr, b->type(), b->shape()[1], 1, "B"));
    if (slots_.b_scale >= 0 && constant(slots_.b_scale) != nullptr)
      RETURN_IF_ERROR(CheckScale(*constant(slots_.b_scale), b->shape()[1], "B"));
    ASSIGN_OR_RETURN(prepared_, IntegerProduct::Create(b->raw_data(), b->type() == ElementType::kInt8, b->shape()[0],
                                                      b->shape()[1], std::move(zps)));
    return absl::OkStatus();
  }

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* a_in = Input(ctx, slots_.a);
    const Tensor* b = Input(ctx, slots_.b);
    if (a_in == nullptr || b == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": A and B are required"));
    // DynamicQuantizeMatMul quantizes A first, exactly as DynamicQuantizeLinear does.
    Tensor quantized_a;
    float a_scale = 1.0f;
    std::vector<int32_t> a_zps;
    if (epilogue_ == Epilogue::kDynamicFloat) {
      if (a_in->type() != ElementType::kFloat32)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": A has type ", ElementTypeName(a_in->type()),
                                                       "; it must be float32"));
      const DynamicQuantParams q = ComputeDynamicQuantParams(a_in->data<float>(), a_in->num_elements(), ctx.threads());
      ASSIGN_OR_RETURN(quantized_a, ctx.AllocateScratchForOverwrite(ElementType::kUint8, a_in->shape()));
      QuantizeToUint8(a_in->data<float>(), a_in->num_elements(), q, quantized_a.data<uint8_t>(), ctx.threads());
      a_scale = q.scale;
      a_zps = {q.zero_point};
      a_in = &quantized_a;
    }
    const Tensor& a = *a_in;
    ASSIGN_OR_RETURN(MatMulShape s, PlanIntegerMatMul(label_, a, *b));
    const int64_t a_batches = s.a_batch.empty() ? 1 : Count(s.a_batch);
    const int64_t b_batches = s.b_batch.empty() ? 1 : Count(s.b_batch);
    if (epilogue_ != Epilogue::kDynamicFloat) {
      ASSIGN_OR_RETURN(a_zps, ReadZeroPoints(label_, Input(ctx, slots_.a_zp), a.type(), s.m, a_batches, "A"));
    }
    std::vector<int32_t> b_zps;
    if (prepared_ == nullptr || b->rank() != 2) {
      ASSIGN_OR_RETURN(b_zps, ReadZeroPoints(label_, Input(ctx, slots_.b_zp), b->type(), s.n, b_batches, "B"));
    }
    const IntegerProduct* prepared = b->rank() == 2 ? prepared_.get() : nullptr;
    if (epilogue_ == Epilogue::kInt32) {
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kInt32, s.output_shape));
      return RunIntegerMatMul(s, a, a_zps, *b, b_zps, prepared, y->data<int32_t>(), ctx.threads());
    }
    ASSIGN_OR_RETURN(Tensor acc, ctx.AllocateScratchForOverwrite(ElementType::kInt32, s.output_shape));
    RETURN_IF_ERROR(RunIntegerMatMul(s, a, a_zps, *b, b_zps, prepared, acc.data<int32_t>(), ctx.threads()));
    if (epilogue_ == Epilogue::kRequantize) return Requantize(ctx, s, acc);
    return ToFloat(ctx, s, acc, a_scale);
  }

 private:
  static int64_t Count(const std::vector<int64_t>& dims) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }

  absl::Status CheckScale(const Tensor& scale, int64_t n, const char* what) const {
    if (scale.num_elements() != 1 && scale.num_elements() != n)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": ", what, " scale has ", scale.num_elements(),
                                                     " elements; expected 1 or ", n, " (one per column)"));
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<float>> Scales(const KernelContext& ctx, int slot, int64_t allowed, const char* what) const {
    const Tensor* t = Input(ctx, slot);
    if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": ", what, " scale is required"));
    RETURN_IF_ERROR(CheckScale(*t, allowed, what));
    return ReadScales(*t, absl::StrCat(label_, ": ", what, " scale"));
  }

  absl::Status ToFloat(KernelContext& ctx, const MatMulShape& s, const Tensor& acc, float a_scale) const {
    if (epilogue_ == Epilogue::kFloat) {
      ASSIGN_OR_RETURN(std::vector<float> as, Scales(ctx, slots_.a_scale, 1, "A"));
      a_scale = ScalarScale(as);
    }
    ASSIGN_OR_RETURN(std::vector<float> bs, Scales(ctx, slots_.b_scale, s.n, "B"));
    const Tensor* bias = Input(ctx, slots_.bias);
    if (bias != nullptr && (bias->type() != ElementType::kFloat32 || bias->num_elements() != s.n))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": bias must be float32 with ", s.n, " elements"));
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, s.output_shape));
    ScaleToFloat(acc.data<int32_t>(), acc.num_elements() / std::max<int64_t>(1, s.n), s.n, a_scale, bs,
                 bias != nullptr ? bias->data<float>() : nullptr, y->data<float>(), ctx.threads());
    return absl::OkStatus();
  }

  // QLinearMatMul: round(acc · (a_scale · b_scale / y_scale)) + y_zp, saturated.
  absl::Status Requantize(KernelContext& ctx, const MatMulShape& s, const Tensor& acc) const {
    ASSIGN_OR_RETURN(std::vector<float> as, Scales(ctx, slots_.a_scale, 1, "A"));
    ASSIGN_OR_RETURN(std::vector<float> bs, Scales(ctx, slots_.b_scale, s.n, "B"));
    ASSIGN_OR_RETURN(std::vector<float> ys, Scales(ctx, slots_.y_scale, 1, "Y"));
    const Tensor* y_zp = Input(ctx, slots_.y_zp);
    const ElementType out_type = y_zp != nullptr ? y_zp->type() : Input(ctx, slots_.a)->type();
    ASSIGN_OR_RETURN(IntRange range, RangeOf(out_type, label_ + ": output"));
    int32_t zp = 0;
    if (y_zp != nullptr) {
      ASSIGN_OR_RETURN(std::vector<int32_t> z, ReadIntegers(*y_zp, label_ + ": Y zero point"));
      if (z.size() != 1) return absl::InvalidArgumentError(absl::StrCat(label_, ": Y zero point must have one element"));
      zp = z[0];
    }
    // The scale type's arithmetic: float16 scales multiply and divide in float16.
    const ElementType scale_type = Input(ctx, slots_.a_scale)->type();
    std::vector<double> multiplier(static_cast<size_t>(s.n));
    for (int64_t c = 0; c < s.n; ++c) {
      const float ab = RoundThroughTypeOf(scale_type, as[0] * bs[bs.size() == 1 ? 0 : c]);
      multiplier[c] = RoundThroughTypeOf(scale_type, ab / ys[0]);
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, out_type, s.output_shape));
    const int32_t* in = acc.data<int32_t>();
    const int64_t total = acc.num_elements();
    for (int64_t i = 0; i < total; ++i) {
      const double v = static_cast<double>(in[i]) * multiplier[i % s.n];
      const int32_t q = QuantizeValue(static_cast<float>(std::nearbyint(v)), zp, range);
      if (out_type == ElementType::kInt8) y->data<int8_t>()[i] = static_cast<int8_t>(q);
      else y->data<uint8_t>()[i] = static_cast<uint8_t>(q);
    }
    return absl::OkStatus();
  }

  static float RoundThroughTypeOf(ElementType t, float v) {
    if (t == ElementType::kFloat16) return HalfToFloat(FloatToHalf(v));
    if (t == ElementType::kBFloat16) return BFloat16ToFloat(FloatToBFloat16(v));
    return v;
  }

  std::string label_;
  ProductSlots slots_;
  Epilogue epilogue_;
  std::shared_ptr<const IntegerProduct> prepared_;
};

KernelFactory ProductFactory(ProductSlots slots, Epilogue epilogue) {
  return [slots, epilogue](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<ProductKernel>(NodeLabel(info), slots, epilogue);
    RETURN_IF_ERROR(kernel->Prepare(info));
    return std::unique_ptr<Kernel>(std::move(kernel));
  };
}

// DynamicQuantizeLinear: y, y_scale, y_zero_point.
absl::Status RunDynamicQuantizeLinear(KernelContext& ctx, const std::string& label) {
  const Tensor* x = ctx.input(0);
  if (x == nullptr || x->type() != ElementType::kFloat32)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input x must be float32"));
  const DynamicQuantParams q = ComputeDynamicQuantParams(x->data<float>(), x->num_elements(), ctx.threads());
  ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kUint8, x->shape()));
  QuantizeToUint8(x->data<float>(), x->num_elements(), q, y->data<uint8_t>(), ctx.threads());
  if (ctx.num_outputs() > 1) {
    ASSIGN_OR_RETURN(Tensor * scale, ctx.AllocateOutputForOverwrite(1, ElementType::kFloat32, {}));
    *scale->data<float>() = q.scale;
  }
  if (ctx.num_outputs() > 2) {
    ASSIGN_OR_RETURN(Tensor * zp, ctx.AllocateOutputForOverwrite(2, ElementType::kUint8, {}));
    *zp->data<uint8_t>() = q.zero_point;
  }
  return absl::OkStatus();
}

}  // namespace

KernelFactory MatMulIntegerKernel() {
  return ProductFactory(ProductSlots{.a = 0, .a_zp = 2, .b = 1, .b_zp = 3}, Epilogue::kInt32);
}

KernelFactory QLinearMatMulKernel() {
  return ProductFactory(
      ProductSlots{.a = 0, .a_scale = 1, .a_zp = 2, .b = 3, .b_scale = 4, .b_zp = 5, .y_scale = 6, .y_zp = 7},
      Epilogue::kRequantize);
}

KernelFactory MatMulIntegerToFloatKernel() {
  return ProductFactory(ProductSlots{.a = 0, .a_scale = 2, .a_zp = 4, .b = 1, .b_scale = 3, .b_zp = 5, .bias = 6},
                        Epilogue::kFloat);
}

KernelFactory DynamicQuantizeMatMulKernel() {
  return ProductFactory(ProductSlots{.a = 0, .b = 1, .b_scale = 2, .b_zp = 3, .bias = 4}, Epilogue::kDynamicFloat);
}

KernelFactory DynamicQuantizeLinearKernel() {
  return [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([label = NodeLabel(info)](KernelContext& ctx) { return RunDynamicQuantizeLinear(ctx, label); });
  };
}

}  // namespace attune::quantize
