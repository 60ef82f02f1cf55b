// ONNX Conv and attune.FusedConv: attributes read once at prepare time, every
// input checked on every run (PlanConv), then oneDNN (onednn_conv.h) or, for
// what oneDNN does not take, the reference loop; then FusedConv's epilogue
// (conv_epilogue.h) where oneDNN did not apply it. FusedConv's X and Y may be
// channels last (channels_last_input / channels_last_output), Z in Y's layout.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "core/memory/pooled_buffer.h"
#include "ops/common/node_label.h"
#include "ops/conv/conv_epilogue.h"
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

// [N, C, S...] <-> [N, S..., C]: the channel axis moved last or back.
std::vector<int64_t> ChannelsLastShape(const std::vector<int64_t>& first) {
  std::vector<int64_t> last(first.begin(), first.end());
  if (first.size() < 3) return last;
  last.erase(last.begin() + 1);
  last.push_back(first[1]);
  return last;
}

std::vector<int64_t> ChannelsFirstShape(const std::vector<int64_t>& last) {
  std::vector<int64_t> first(last.begin(), last.end());
  if (last.size() < 3) return first;
  first.pop_back();
  first.insert(first.begin() + 1, last.back());
  return first;
}

// Copies [N, C, S] to [N, S, C] (to_last) or back.
void MoveChannels(const float* from, float* to, int64_t n, int64_t c, int64_t s, bool to_last) {
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t i = 0; i < s; ++i) {
        const int64_t first = (b * c + ch) * s + i, last = (b * s + i) * c + ch;
        if (to_last) to[last] = from[first];
        else to[first] = from[last];
      }
}

class ConvKernel final : public Kernel {
 public:
  ConvKernel(std::string label, ConvAttributes attrs, bool weights_constant, OneDnnConvOptions options)
      : label_(std::move(label)), attrs_(std::move(attrs)), weights_constant_(weights_constant),
        options_(options) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    const Tensor* z = ctx.num_inputs() > 3 ? ctx.input(3) : nullptr;
    if (x == nullptr || w == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs X and W"));
    RETURN_IF_ERROR(CheckTypes(label_, x->type(), w->type(),
                               b != nullptr ? std::optional<ElementType>(b->type()) : std::nullopt));
    const std::vector<int64_t> x_shape =
        options_.x_channels_last ? ChannelsFirstShape(x->shape()) : std::vector<int64_t>(x->shape());
    ASSIGN_OR_RETURN(ConvGeometry g,
                     PlanConv(label_, attrs_, x_shape, w->shape(), b != nullptr ? &b->shape() : nullptr));
    const std::vector<int64_t> y_shape =
        options_.y_channels_last ? ChannelsLastShape(g.output_shape()) : g.output_shape();
    if (options_.epilogue.residual) RETURN_IF_ERROR(CheckResidual(z, y_shape));
    absl::StatusOr<Tensor*> y = ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, y_shape);
    if (!y.ok())
      return absl::Status(y.status().code(), absl::StrCat(label_, ": output Y ", ShapeToString(y_shape),
                                                          ": ", y.status().message()));
    if ((*y)->num_elements() == 0) return absl::OkStatus();
    // A residual that shares Y's memory (a caller's buffer) is read before Y is written.
    const float* residual = z != nullptr ? z->data<float>() : nullptr;
    std::unique_ptr<PooledBuffer> residual_copy;
    const int64_t n = (*y)->num_elements();
    const float* y_begin = (*y)->data<float>();
    if (residual != nullptr && residual < y_begin + n && y_begin < residual + n) {
      residual_copy = std::make_unique<PooledBuffer>(n * sizeof(float));
      if (residual_copy->data() == nullptr)
        return absl::ResourceExhaustedError(absl::StrCat(label_, ": out of memory for the residual"));
      std::copy(residual, residual + n, static_cast<float*>(residual_copy->data()));
      residual = static_cast<const float*>(residual_copy->data());
    }
    ASSIGN_OR_RETURN(const bool onednn_ran, Convolve(g, *x, *w, b, **y, ctx.threads()));
    ApplyConvEpilogue(options_.epilogue, onednn_ran, residual, (*y)->data<float>(), n, ctx.threads());
    return absl::OkStatus();
  }

 private:
  absl::Status CheckResidual(const Tensor* z, const std::vector<int64_t>& y_shape) const {
    if (z == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs the residual input Z"));
    if (z->type() != ElementType::kFloat32 || z->shape() != y_shape)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": residual Z is ", ElementTypeName(z->type()), " ",
                                                     ShapeToString(z->shape()), "; it must be float32 ",
                                                     ShapeToString(y_shape), " as the output"));
    return absl::OkStatus();
  }

  // y = conv(x, w) + b, with the activation oneDNN applies when it runs it;
  // whether oneDNN ran it.
  absl::StatusOr<bool> Convolve(const ConvGeometry& g, const Tensor& x, const Tensor& w, const Tensor* b, Tensor& y,
                        int threads) const {
    const float* bias = b != nullptr ? b->data<float>() : nullptr;
    if (OneDnnConv::Takes(g)) {
      absl::StatusOr<bool> done = onednn_.Run(g, x.data<float>(), w.data<float>(), weights_constant_, bias,
                                              y.data<float>(), threads, options_);
      if (!done.ok())
        return absl::Status(done.status().code(), absl::StrCat(label_, ": ", done.status().message()));
      if (*done) return true;
    }
    // The reference loop reads and writes channels first.
    std::unique_ptr<PooledBuffer> x_first, y_first;
    const float* xp = x.data<float>();
    float* yp = y.data<float>();
    int64_t spatial_in = 1, spatial_out = 1;
    for (int i = 0; i < g.spatial_rank(); ++i) {
      spatial_in *= g.input[i];
      spatial_out *= g.output[i];
    }
    if (options_.x_channels_last) {
      x_first = std::make_unique<PooledBuffer>(x.num_elements() * sizeof(float) + 1);
      if (x_first->data() == nullptr) return absl::ResourceExhaustedError(absl::StrCat(label_, ": out of memory"));
      MoveChannels(xp, static_cast<float*>(x_first->data()), g.batch, g.in_channels, spatial_in, false);
      xp = static_cast<const float*>(x_first->data());
    }
    if (options_.y_channels_last) {
      y_first = std::make_unique<PooledBuffer>(y.num_elements() * sizeof(float) + 1);
      if (y_first->data() == nullptr) return absl::ResourceExhaustedError(absl::StrCat(label_, ": out of memory"));
      yp = static_cast<float*>(y_first->data());
    }
    ConvReference(g, xp, w.data<float>(), bias, yp, threads);
    if (y_first) MoveChannels(yp, y.data<float>(), g.batch, g.out_channels, spatial_out, true);
    return false;
  }

  std::string label_;
  ConvAttributes attrs_;
  bool weights_constant_;  // W is a constant: oneDNN's layout of it is made once
  OneDnnConvOptions options_;
  OneDnnConv onednn_;
};

absl::StatusOr<std::unique_ptr<Kernel>> MakeKernel(const KernelInfo& info, bool fused) {
  std::string label = NodeLabel(info);
  const int max_inputs = fused ? 4 : 3;
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs X and W"));
  if (info.num_inputs() > max_inputs || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes X, W, an optional B", fused ? " and Z" : "",
                                                   " and gives one output Y; the node has ", info.num_inputs(),
                                                   " inputs and ", info.num_outputs, " outputs"));
  auto type_of = [&](int i) {
    return i < static_cast<int>(info.input_types.size()) && i < info.num_inputs() && info.input_present[i]
               ? info.input_types[i]
               : std::nullopt;
  };
  if (type_of(0)) RETURN_IF_ERROR(CheckTypes(label, *type_of(0), type_of(1), type_of(2)));
  ASSIGN_OR_RETURN(ConvAttributes attrs, ReadConvAttributes(label, info.attrs()));
  const bool weights_constant = info.constant_inputs.size() > 1 && info.constant_inputs[1] != nullptr;
  OneDnnConvOptions options;
  if (fused) {
    const bool residual = info.num_inputs() > 3 && info.input_present[3];
    ASSIGN_OR_RETURN(options.epilogue, ReadConvEpilogue(label, info.attrs(), residual));
    absl::StatusOr<int64_t> x_last = info.attrs().GetInt("channels_last_input", 0);
    absl::StatusOr<int64_t> y_last = info.attrs().GetInt("channels_last_output", 0);
    if (!x_last.ok() || !y_last.ok() || (*x_last != 0 && *x_last != 1) || (*y_last != 0 && *y_last != 1))
      return absl::InvalidArgumentError(
          absl::StrCat(label, ": channels_last_input and channels_last_output must be 0 or 1"));
    options.x_channels_last = *x_last == 1;
    options.y_channels_last = *y_last == 1;
  }
  return std::make_unique<ConvKernel>(std::move(label), std::move(attrs), weights_constant, options);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeConvKernel(const KernelInfo& info) { return MakeKernel(info, false); }

absl::StatusOr<std::unique_ptr<Kernel>> MakeFusedConvKernel(const KernelInfo& info) { return MakeKernel(info, true); }

}  // namespace attune
