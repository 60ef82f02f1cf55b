// CausalConvWithState (opset 27): a depthwise causal 1-D convolution over
// input [B, C, L] with weight [C, 1, k], whose left context is past_state
// [B, C, k - 1] (zeros when omitted). present_state is the last k - 1
// positions of past_state ++ input. The convolution sums in double and is
// rounded to the element type once; the optional SiLU ('silu' or its alias
// 'swish') is applied to that rounded value, as ONNX's reference does.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/conv/kernels.h"

namespace attune {
namespace {

enum Input { kInput, kWeight, kBias, kPastState };

// A value rounded to T and back, so that the activation sees what a
// convolution in T would have written.
double RoundTo(ElementType type, double x) {
  switch (type) {
    case ElementType::kFloat32: return static_cast<float>(x);
    case ElementType::kFloat16: return HalfToFloat(FloatToHalf(DoubleToFloatRoundToOdd(x)));
    case ElementType::kBFloat16: return BFloat16ToFloat(FloatToBFloat16(DoubleToFloatRoundToOdd(x)));
    default: return x;
  }
}

class CausalConvWithStateKernel final : public Kernel {
 public:
  CausalConvWithStateKernel(std::string label, bool silu) : label_(std::move(label)), silu_(silu) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(kInput);
    const Tensor* w = ctx.input(kWeight);
    if (x == nullptr || w == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input and weight"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() != 3)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": input has shape ", ShapeToString(xs), "; expected [batch, channels, length]"));
    const int64_t batch = xs[0], channels = xs[1], length = xs[2];
    const std::vector<int64_t>& ws = w->shape();
    if (ws.size() != 3 || ws[0] != channels || ws[1] != 1 || ws[2] < 1)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": weight has shape ", ShapeToString(ws), "; expected [",
                                                     channels, ", 1, k] with k >= 1"));
    const int64_t k = ws[2], context = k - 1;
    const Tensor* bias = ctx.input(kBias);
    if (bias != nullptr && bias->shape() != std::vector<int64_t>{channels})
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": bias has shape ", ShapeToString(bias->shape()), "; expected [", channels, "]"));
    const Tensor* past = ctx.input(kPastState);
    if (past != nullptr && past->shape() != std::vector<int64_t>{batch, channels, context})
      return absl::InvalidArgumentError(absl::StrCat(label_, ": past_state has shape ", ShapeToString(past->shape()),
                                                     "; expected [", batch, ", ", channels, ", ", context, "]"));
    for (const Tensor* t : {w, bias, past})
      if (t != nullptr && t->type() != x->type())
        return absl::InvalidArgumentError(absl::StrCat(label_, ": weight, bias and past_state must have input's type ",
                                                       ElementTypeName(x->type())));
    ASSIGN_OR_RETURN(std::vector<double> in, LoadAsDoubles(*x, absl::StrCat(label_, ": input")));
    ASSIGN_OR_RETURN(std::vector<double> wv, LoadAsDoubles(*w, absl::StrCat(label_, ": weight")));
    std::vector<double> bv(channels, 0.0), pv(static_cast<size_t>(batch * channels * context), 0.0);
    if (bias != nullptr) {
      ASSIGN_OR_RETURN(bv, LoadAsDoubles(*bias, absl::StrCat(label_, ": bias")));
    }
    if (past != nullptr) {
      ASSIGN_OR_RETURN(pv, LoadAsDoubles(*past, absl::StrCat(label_, ": past_state")));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), xs));
    std::vector<double> out(in.size()), present(pv.size());
    std::vector<double> padded(static_cast<size_t>(context + length));
    for (int64_t bc = 0; bc < batch * channels; ++bc) {
      const int64_t c = bc % channels;
      std::copy_n(pv.begin() + bc * context, context, padded.begin());
      std::copy_n(in.begin() + bc * length, length, padded.begin() + context);
      for (int64_t l = 0; l < length; ++l) {
        double sum = bv[c];
        for (int64_t j = 0; j < k; ++j) sum += wv[c * k + j] * padded[l + j];
        double v = RoundTo(x->type(), sum);
        if (silu_) v = v / (1 + std::exp(-v));
        out[bc * length + l] = v;
      }
      std::copy_n(padded.end() - context, context, present.begin() + bc * context);
    }
    RETURN_IF_ERROR(StoreDoubles(out, *y, absl::StrCat(label_, ": output")));
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      ASSIGN_OR_RETURN(Tensor * p, ctx.AllocateOutputForOverwrite(1, x->type(), {batch, channels, context}));
      RETURN_IF_ERROR(StoreDoubles(present, *p, absl::StrCat(label_, ": present_state")));
    }
    return absl::OkStatus();
  }

 private:
  std::string label_;
  bool silu_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeCausalConvWithStateKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || !info.input_present[kInput] || !info.input_present[kWeight])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs input and weight"));
  ASSIGN_OR_RETURN(std::string activation, info.attrs().GetString("activation", "none"));
  if (activation != "none" && activation != "silu" && activation != "swish")
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'activation' has the unknown value ",
                                                   QuoteName(activation), "; expected none, silu or swish"));
  for (size_t i = 0; i < info.input_types.size(); ++i)
    if (info.input_types[i] && !IsFloatType(*info.input_types[i]))
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " has type ",
                                                     ElementTypeName(*info.input_types[i]),
                                                     "; supported: float32, float64, float16, bfloat16"));
  return std::make_unique<CausalConvWithStateKernel>(std::move(label), activation != "none");
}

}  // namespace attune
