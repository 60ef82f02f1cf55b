// LRN (opset 1/13): local response normalization across channels of
// [N, C, d1, ...]: y = x / (bias + alpha / size * sum of x^2 over the
// channels c - floor((size-1)/2) .. c + ceil((size-1)/2))^beta, in double.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/norm/channel_norms.h"

namespace attune {
namespace {

struct LrnConfig {
  std::string label;
  double alpha = 1e-4, beta = 0.75, bias = 1.0;
  int64_t size = 1;
};

absl::Status RunLrn(KernelContext& ctx, const LrnConfig& cfg) {
  const Tensor* x = ctx.input(0);
  if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 0 is required"));
  const auto& shape = x->shape();
  if (shape.size() < 3)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 0 has shape ", ShapeToString(shape),
                                                   "; expected [N, C, d1, ...]"));
  const int64_t n = shape[0], c = shape[1];
  const int64_t inner = n * c == 0 ? 0 : x->num_elements() / (n * c);
  const int64_t before = (cfg.size - 1) / 2, after = cfg.size - 1 - before;
  return VisitType(FloatTypes{}, x->type(), cfg.label + ": input 0", [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, x->type(), shape));
    const auto* in = x->data<StorageOf<T>>();
    auto* y = out->data<StorageOf<T>>();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < c; ++ch)
        for (int64_t i = 0; i < inner; ++i) {
          double square_sum = 0;
          for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
            const double v = Arith<T>::Load(in[(b * c + k) * inner + i]);
            square_sum += v * v;
          }
          const int64_t at = (b * c + ch) * inner + i;
          const double scale = std::pow(cfg.bias + cfg.alpha / static_cast<double>(cfg.size) * square_sum, cfg.beta);
          y[at] = Arith<T>::Store(static_cast<ComputeOf<T>>(Arith<T>::Load(in[at]) / scale));
        }
    return absl::OkStatus();
  });
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeLrnKernel(const KernelInfo& info) {
  LrnConfig cfg;
  cfg.label = NodeLabel(info);
  auto size = info.attrs().GetInt("size");
  auto alpha = info.attrs().GetFloat("alpha", 1e-4f);
  auto beta = info.attrs().GetFloat("beta", 0.75f);
  auto bias = info.attrs().GetFloat("bias", 1.0f);
  if (!size.ok() || *size < 1)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": attribute size is required and must be >= 1"));
  if (!alpha.ok() || !beta.ok() || !bias.ok())
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": attributes alpha, beta and bias must be floats"));
  cfg.size = *size;
  cfg.alpha = *alpha;
  cfg.beta = *beta;
  cfg.bias = *bias;
  return MakeKernel([cfg](KernelContext& ctx) { return RunLrn(ctx, cfg); });
}

}  // namespace attune
