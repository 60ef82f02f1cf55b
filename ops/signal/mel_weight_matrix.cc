// MelWeightMatrix (opset 17): [dft_length / 2 + 1, num_mel_bins] triangular
// filters, evenly spaced on the mel scale (mel = 2595 log10(1 + hz / 700))
// between lower_edge_hertz and upper_edge_hertz. The band edges follow ONNX's
// reference: num_mel_bins + 2 points with a mel step of the range divided by
// num_mel_bins + 2, each mapped to the bin floor((dft_length + 1) hz / sample_rate).
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/common/type_dispatch.h"
#include "ops/signal/kernels.h"

namespace attune {
namespace {

absl::StatusOr<double> ScalarValue(const std::string& label, const Tensor* t, const char* name) {
  if (t == nullptr || t->num_elements() != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " must hold one value"));
  if (t->type() == ElementType::kInt64) return static_cast<double>(t->data<int64_t>()[0]);
  if (t->type() == ElementType::kInt32) return static_cast<double>(t->data<int32_t>()[0]);
  ASSIGN_OR_RETURN(std::vector<double> v, LoadAsDoubles(*t, absl::StrCat(label, ": input ", name)));
  return v[0];
}

class MelWeightMatrixKernel final : public Kernel {
 public:
  MelWeightMatrixKernel(std::string label, ElementType type) : label_(std::move(label)), type_(type) {}

  absl::Status Run(KernelContext& ctx) const override {
    ASSIGN_OR_RETURN(double mel_bins_d, ScalarValue(label_, ctx.input(0), "num_mel_bins"));
    ASSIGN_OR_RETURN(double dft_d, ScalarValue(label_, ctx.input(1), "dft_length"));
    ASSIGN_OR_RETURN(double rate_d, ScalarValue(label_, ctx.input(2), "sample_rate"));
    ASSIGN_OR_RETURN(double lower, ScalarValue(label_, ctx.input(3), "lower_edge_hertz"));
    ASSIGN_OR_RETURN(double upper, ScalarValue(label_, ctx.input(4), "upper_edge_hertz"));
    const int64_t mel_bins = static_cast<int64_t>(mel_bins_d), dft = static_cast<int64_t>(dft_d);
    const int64_t rate = static_cast<int64_t>(rate_d);
    if (mel_bins < 1 || dft < 1 || rate < 1 || !(lower >= 0) || !(upper > lower) || !std::isfinite(upper))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs num_mel_bins, dft_length and sample_rate >= 1 and ",
                                                     "0 <= lower_edge_hertz < upper_edge_hertz (got ", mel_bins, ", ",
                                                     dft, ", ", rate, ", ", lower, ", ", upper, ")"));
    const int64_t spectrogram_bins = dft / 2 + 1;
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, type_, {spectrogram_bins, mel_bins}));
    const double low_mel = 2595 * std::log10(1 + lower / 700), high_mel = 2595 * std::log10(1 + upper / 700);
    const double step = (high_mel - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> edge(mel_bins + 2);
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz = 700 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595) - 1);
      edge[i] = static_cast<int64_t>(std::floor(static_cast<double>(dft + 1) * hz / static_cast<double>(rate)));
    }
    std::vector<double> out(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
    auto set = [&](int64_t j, int64_t i, double v) {
      if (j >= 0 && j < spectrogram_bins) out[j * mel_bins + i] = v;
    };
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t lo = edge[i], center = edge[i + 1], hi = edge[i + 2];
      if (center == lo) set(center, i, 1);
      else
        for (int64_t j = lo; j <= center; ++j) set(j, i, static_cast<double>(j - lo) / static_cast<double>(center - lo));
      if (hi > center)
        for (int64_t j = center; j < hi; ++j) set(j, i, static_cast<double>(hi - j) / static_cast<double>(hi - center));
    }
    return StoreDoubles(out, *y, absl::StrCat(label_, ": output"));
  }

 private:
  std::string label_;
  ElementType type_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeMelWeightMatrixKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 5)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes num_mel_bins, dft_length, sample_rate, "
                                                          "lower_edge_hertz and upper_edge_hertz"));
  ASSIGN_OR_RETURN(int64_t dtype, info.attrs().GetInt("output_datatype", 1));
  const ElementType type = static_cast<ElementType>(dtype);
  if (!IsFloatType(type))
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'output_datatype' is ", dtype,
                                                   "; supported: float32, float64, float16, bfloat16"));
  return std::make_unique<MelWeightMatrixKernel>(std::move(label), type);
}

}  // namespace attune
