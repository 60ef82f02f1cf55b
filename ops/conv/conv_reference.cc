#include "ops/conv/conv_reference.h"

#include <array>

#include "ops/common/parallel.h"

namespace attune {
namespace {

// One spatial axis, with the axes a 1-D or 2-D conv lacks as size 1.
struct Axis {
  int64_t in = 1, kernel = 1, out = 1, stride = 1, dilation = 1, pad = 0;
};

// (n, m) planes per thread: one plane is a window of taps per output, enough
// work to share.
constexpr int64_t kPlaneGrain = 1;

// a · b · c, or 0 when it overflows: that only happens for an empty X or W
// (a non-empty tensor's sizes multiply within int64), which is never read.
int64_t ProductOrZero(int64_t a, int64_t b, int64_t c) {
  int64_t p = 0;
  if (__builtin_mul_overflow(a, b, &p) || __builtin_mul_overflow(p, c, &p)) return 0;
  return p;
}

}  // namespace

void ConvReference(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y, int threads) {
  // Axes as depth, height, width; leading ones of size 1 for fewer spatial dims.
  std::array<Axis, kMaxConvSpatialRank> ax;
  const int lead = kMaxConvSpatialRank - g.spatial_rank();
  for (int i = 0; i < g.spatial_rank(); ++i)
    ax[lead + i] = Axis{g.input[i], g.kernel[i], g.output[i], g.strides[i], g.dilations[i], g.pad_begin[i]};
  const Axis &d = ax[0], &h = ax[1], &wd = ax[2];
  const int64_t in_plane = ProductOrZero(d.in, h.in, wd.in);
  const int64_t out_plane = d.out * h.out * wd.out;  // Y is allocated: its sizes multiply
  const int64_t cg = g.in_channels_per_group(), mg = g.out_channels_per_group();
  const int64_t taps = cg == 0 ? 0 : ProductOrZero(d.kernel, h.kernel, wd.kernel);
  const int64_t planes = g.batch * g.out_channels;

  ParallelForRange(planes, kPlaneGrain, threads, [&](int64_t first, int64_t last) {
    for (int64_t plane = first; plane < last; ++plane) {
      const int64_t n = plane / g.out_channels, m = plane % g.out_channels;
      const int64_t group = m / mg;
      // An empty X (no channels or no input positions) is never read, and
      // its offsets could overflow however large N and C are.
      const float* x_group = cg == 0 || in_plane == 0 ? x : x + (n * g.in_channels + group * cg) * in_plane;
      const float* w_m = w + m * cg * taps;
      float* y_plane = y + plane * out_plane;
      for (int64_t od = 0; od < d.out; ++od)
        for (int64_t oh = 0; oh < h.out; ++oh)
          for (int64_t ow = 0; ow < wd.out; ++ow) {
            float acc = b != nullptr ? b[m] : 0.0f;
            for (int64_t c = 0; c < cg; ++c) {
              const float* x_c = x_group + c * in_plane;
              const float* w_c = w_m + c * taps;
              for (int64_t kd = 0; kd < d.kernel; ++kd) {
                const int64_t id = od * d.stride - d.pad + kd * d.dilation;
                if (id < 0 || id >= d.in) continue;
                for (int64_t kh = 0; kh < h.kernel; ++kh) {
                  const int64_t ih = oh * h.stride - h.pad + kh * h.dilation;
                  if (ih < 0 || ih >= h.in) continue;
                  const float* x_row = x_c + (id * h.in + ih) * wd.in;
                  const float* w_row = w_c + (kd * h.kernel + kh) * wd.kernel;
                  for (int64_t kw = 0; kw < wd.kernel; ++kw) {
                    const int64_t iw = ow * wd.stride - wd.pad + kw * wd.dilation;
                    if (iw < 0 || iw >= wd.in) continue;
                    acc += x_row[iw] * w_row[kw];
                  }
                }
              }
            }
            y_plane[(od * h.out + oh) * wd.out + ow] = acc;
          }
    }
  });
}

}  // namespace attune
