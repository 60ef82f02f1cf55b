// GridSample (opsets 16, 20, 22): X [N, C, D1..Dr] sampled at the points of
// grid [N, O1..Or, r], whose last axis holds normalised coordinates in
// [-1, 1], innermost spatial axis first (x, y, z). Modes nearest (ties to
// even), linear and cubic (A = -0.75); padding zeros, border or reflection;
// align_corners, all as ONNX's reference defines them. Per output point,
// each axis gives its taps; the value is the sum over their product, in double.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/resize/kernels.h"

namespace attune {
namespace {

enum class SampleMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct GridAttributes {
  SampleMode mode = SampleMode::kLinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

// One axis of `size`: the taps (index, weight) for normalised coordinate g;
// index -1 reads zero.
void AxisTaps(const GridAttributes& a, double g, int64_t size, std::vector<std::pair<int64_t, double>>& taps) {
  taps.clear();
  const double n = static_cast<double>(size);
  double x = a.align_corners ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
  const double lo = a.align_corners ? 0 : -0.5, hi = a.align_corners ? n - 1 : n - 0.5;
  if (a.padding == Padding::kBorder) x = std::clamp(x, 0.0, n - 1);
  else if (a.padding == Padding::kReflection) x = Reflect(x, lo, hi);
  auto index = [&](int64_t i) -> int64_t {
    if (i >= 0 && i < size) return i;
    if (a.padding == Padding::kZeros) return -1;
    if (a.padding == Padding::kBorder) return std::clamp<int64_t>(i, 0, size - 1);
    return std::clamp<int64_t>(static_cast<int64_t>(Reflect(static_cast<double>(i), lo, hi)), 0, size - 1);
  };
  if (!std::isfinite(x)) {
    taps.emplace_back(-1, 1.0);
    return;
  }
  if (a.mode == SampleMode::kNearest) {
    taps.emplace_back(index(static_cast<int64_t>(std::nearbyint(x))), 1.0);
    return;
  }
  const double f = std::floor(x), r = x - f;
  const int64_t i0 = static_cast<int64_t>(f);
  if (a.mode == SampleMode::kLinear) {
    taps.emplace_back(index(i0), 1 - r);
    taps.emplace_back(index(i0 + 1), r);
    return;
  }
  constexpr double A = -0.75;
  const double c0 = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
  const double c1 = ((A + 2) * r - (A + 3)) * r * r + 1;
  const double c2 = ((A + 2) * (1 - r) - (A + 3)) * (1 - r) * (1 - r) + 1;
  const double c3 = ((A * (2 - r) - 5 * A) * (2 - r) + 8 * A) * (2 - r) - 4 * A;
  const double c[4] = {c0, c1, c2, c3};
  for (int k = 0; k < 4; ++k) taps.emplace_back(index(i0 - 1 + k), c[k]);
}

class GridSampleKernel final : public Kernel {
 public:
  GridSampleKernel(std::string label, GridAttributes attrs) : label_(std::move(label)), attrs_(attrs) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* grid = ctx.input(1);
    if (x == nullptr || grid == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs X and grid"));
    const std::vector<int64_t>& xs = x->shape();
    const std::vector<int64_t>& gs = grid->shape();
    const int r = static_cast<int>(xs.size()) - 2;
    if (r < 1 || gs.size() != xs.size() || gs[0] != xs[0] || gs.back() != r)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": grid ", ShapeToString(gs), " must be [N, O1..O", r,
                                                     ", ", r, "] for X ", ShapeToString(xs)));
    if (attrs_.mode == SampleMode::kCubic && r != 2)
      return absl::UnimplementedError(absl::StrCat(label_, ": cubic mode runs on 4-D X only"));
    std::vector<int64_t> out_shape{xs[0], xs[1]};
    int64_t points = 1, plane = 1;
    for (int i = 0; i < r; ++i) out_shape.push_back(gs[1 + i]), points *= gs[1 + i], plane *= xs[2 + i];
    std::vector<int64_t> strides(r, 1);
    for (int i = r - 2; i >= 0; --i) strides[i] = strides[i + 1] * xs[3 + i];
    return VisitType(FloatTypes{}, x->type(), absl::StrCat(label_, ": input X"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      if (grid->type() != x->type())
        return absl::InvalidArgumentError(absl::StrCat(label_, ": grid must have X's element type"));
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      const StorageOf<T>* gp = grid->data<StorageOf<T>>();
      StorageOf<T>* out = y->data<StorageOf<T>>();
      const int64_t channels = xs[1];
      ParallelForRange(xs[0] * points, std::max<int64_t>(1, kCostlyOpGrain / std::max<int64_t>(channels, 1)),
                       ctx.threads(), [&](int64_t begin, int64_t end) {
        std::vector<std::vector<std::pair<int64_t, double>>> taps(r);
        for (int64_t p = begin; p < end; ++p) {
          const int64_t n = p / points, o = p % points;
          for (int i = 0; i < r; ++i)  // grid's last axis: x (innermost spatial axis) first
            AxisTaps(attrs_, static_cast<double>(Arith<T>::Load(gp[p * r + (r - 1 - i)])), xs[2 + i], taps[i]);
          for (int64_t c = 0; c < channels; ++c) {
            const StorageOf<T>* src = in + (n * channels + c) * plane;
            double sum = 0;
            std::vector<size_t> k(r, 0);
            while (true) {
              double w = 1;
              int64_t offset = 0;
              for (int i = 0; i < r && offset >= 0; ++i) {
                const auto& [idx, wt] = taps[i][k[i]];
                w *= wt;
                offset = idx < 0 ? -1 : offset + idx * strides[i];
              }
              if (offset >= 0) sum += w * static_cast<double>(Arith<T>::Load(src[offset]));
              int i = r - 1;
              while (i >= 0 && ++k[i] == taps[i].size()) k[i--] = 0;
              if (i < 0) break;
            }
            out[(n * channels + c) * points + o] = Arith<T>::Store(static_cast<ComputeOf<T>>(sum));
          }
        }
      });
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  GridAttributes attrs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeGridSampleKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 2 || !info.input_present[0] || !info.input_present[1] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes X and grid and gives one output"));
  GridAttributes a;
  ASSIGN_OR_RETURN(std::string mode, info.attrs().GetString("mode", info.opset < 20 ? "bilinear" : "linear"));
  if (mode == "nearest") a.mode = SampleMode::kNearest;
  else if (mode == "linear" || mode == "bilinear") a.mode = SampleMode::kLinear;
  else if (mode == "cubic" || mode == "bicubic") a.mode = SampleMode::kCubic;
  else return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'mode' has the unknown value ", QuoteName(mode)));
  ASSIGN_OR_RETURN(std::string padding, info.attrs().GetString("padding_mode", "zeros"));
  if (padding == "zeros") a.padding = Padding::kZeros;
  else if (padding == "border") a.padding = Padding::kBorder;
  else if (padding == "reflection") a.padding = Padding::kReflection;
  else return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'padding_mode' has the unknown value ",
                                                    QuoteName(padding)));
  ASSIGN_OR_RETURN(int64_t align, info.attrs().GetInt("align_corners", 0));
  a.align_corners = align != 0;
  return std::make_unique<GridSampleKernel>(std::move(label), a);
}

}  // namespace attune
