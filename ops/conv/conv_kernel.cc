// ONNX Conv: attributes read once at prepare time, every input checked on
// every run (PlanConv), then oneDNN (onednn_conv.h) or, for what oneDNN does
// not take, the reference loop.
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/conv/conv_params.h"
#include "ops/conv/conv_reference.h"
#include "ops/conv/kernels.h"
#include "ops/conv/onednn_conv.h"

namespace attune {
namespace {

// X, W and B share one type (ONNX's T); only float32 runs.
absl::Status CheckTypes(const std::string& label, ElementType x, std::optional<ElementType> w,
                        std::optional<ElementType> b) {
  if (w && *w != x)
    return absl::InvalidArgumentError(absl::StrCat(label, ": weights W have element type ", ElementTypeName(*w),
                                                   ", input X ", ElementTypeName(x), "; they must match"));
  if (b && *b != x)
    return absl::InvalidArgumentError(absl::StrCat(label, ": bias B has element type ", ElementTypeName(*b),
                                                   ", input X ", ElementTypeName(x), "; they must match"));
  if (x != ElementType::kFloat32)
    return absl::UnimplementedError(
        absl::StrCat(label, ": input X has element type ", ElementTypeName(x), "; Attune's Conv runs float32 only"));
  return absl::OkStatus();
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(std::string label, ConvAttributes attrs, bool weights_constant)
      : label_(std::move(label)), attrs_(std::move(attrs)), weights_constant_(weights_constant) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (x == nullptr || w == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs X and W"));
    RETURN_IF_ERROR(CheckTypes(label_, x->type(), w->type(),
                               b != nullptr ? std::optional<ElementType>(b->type()) : std::nullopt));
    ASSIGN_OR_RETURN(ConvGeometry g,
                     PlanConv(label_, attrs_, x->shape(), w->shape(), b != nullptr ? &b->shape() : nullptr));
    absl::StatusOr<Tensor*> y = ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, g.output_shape());
    if (!y.ok())
      return absl::Status(y.status().code(), absl::StrCat(label_, ": output Y ", ShapeToString(g.output_shape()),
                                                          ": ", y.status().message()));
    if ((*y)->num_elements() == 0) return absl::OkStatus();
    const float* bias = b != nullptr ? b->data<float>() : nullptr;
    float* out = (*y)->data<float>();
    const int threads = ctx.threads();
    if (OneDnnConv::Takes(g)) {
      absl::StatusOr<bool> done = onednn_.Run(g, x->data<float>(), w->data<float>(), weights_constant_, bias,
                                                    out, threads);
      if (!done.ok())
        return absl::Status(done.status().code(), absl::StrCat(label_, ": ", done.status().message()));
      if (*done) return absl::OkStatus();
    }
    ConvReference(g, x->data<float>(), w->data<float>(), bias, out, threads);
    return absl::OkStatus();
  }

 private:
  std::string label_;
  ConvAttributes attrs_;
  bool weights_constant_;  // W is a constant: oneDNN's layout of it is made once
  OneDnnConv onednn_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeConvKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs X and W"));
  if (info.num_inputs() > 3 || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes X, W and an optional B and gives one output Y; ",
                                                   "the node has ", info.num_inputs(), " inputs and ",
                                                   info.num_outputs, " outputs"));
  auto type_of = [&](int i) {
    return i < static_cast<int>(info.input_types.size()) && i < info.num_inputs() && info.input_present[i]
               ? info.input_types[i]
               : std::nullopt;
  };
  if (type_of(0)) RETURN_IF_ERROR(CheckTypes(label, *type_of(0), type_of(1), type_of(2)));
  ASSIGN_OR_RETURN(ConvAttributes attrs, ReadConvAttributes(label, info.attrs()));
  const bool weights_constant = info.constant_inputs.size() > 1 && info.constant_inputs[1] != nullptr;
  return std::make_unique<ConvKernel>(std::move(label), std::move(attrs), weights_constant);
}

}  // namespace attune
