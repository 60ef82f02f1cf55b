// ONNX Conv in double precision, written from the operator's definition
// (onnx/docs/Operators.md, Conv) independently of ops/conv/, for the conv
// tests: the pads each auto_pad implies, the output size, and every output
// as the sum over its window's taps.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "tests/ops/matmul_test_util.h"

namespace attune::testing {

struct ConvCase {
  std::string name;
  std::vector<int64_t> x, w;  // [N, C, in...], [M, C/group, k...]
  bool bias = false;
  int64_t group = 1;  // 1: attribute absent
  /// Empty: attribute absent (ONNX's defaults: ones, zeros).
  std::vector<int64_t> strides, dilations, pads;
  std::string auto_pad;  // "": attribute absent (NOTSET)
  bool kernel_shape_attribute = false;  // also give kernel_shape (= W's spatial dims)
};

inline Attributes ConvAttrs(const ConvCase& c) {
  Attributes a;
  if (c.group != 1) a.Set("group", c.group);
  if (!c.strides.empty()) a.Set("strides", c.strides);
  if (!c.dilations.empty()) a.Set("dilations", c.dilations);
  if (!c.pads.empty()) a.Set("pads", c.pads);
  if (!c.auto_pad.empty()) a.Set("auto_pad", c.auto_pad);
  if (c.kernel_shape_attribute) a.Set("kernel_shape", std::vector<int64_t>(c.w.begin() + 2, c.w.end()));
  return a;
}

/// The reference's view of one case: pads per axis and the output shape.
struct ConvReferencePlan {
  std::vector<int64_t> pad_begin, out_shape;  // out_shape = [N, M, out...]
};

inline ConvReferencePlan PlanReferenceConv(const ConvCase& c) {
  const size_t spatial = c.x.size() - 2;
  ConvReferencePlan p;
  p.out_shape = {c.x[0], c.w[0]};
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t in = c.x[2 + i], k = c.w[2 + i];
    const int64_t s = c.strides.empty() ? 1 : c.strides[i];
    const int64_t d = c.dilations.empty() ? 1 : c.dilations[i];
    const int64_t extent = (k - 1) * d + 1;
    int64_t begin = 0, end = 0, out = 0;
    if (c.auto_pad == "SAME_UPPER" || c.auto_pad == "SAME_LOWER") {
      // "output_shape[i] = ceil(input_shape[i] / strides[i])", the padding
      // split evenly, an odd one at the end (UPPER) or beginning (LOWER).
      out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      begin = c.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      if (c.auto_pad != "VALID" && !c.pads.empty()) {
        begin = c.pads[i];
        end = c.pads[spatial + i];
      }
      out = (in + begin + end - extent) / s + 1;
    }
    p.pad_begin.push_back(begin);
    p.out_shape.push_back(out);
  }
  return p;
}

struct ConvReferenceResult {
  std::vector<int64_t> shape;
  std::vector<double> y;
  std::vector<double> magnitude;  // per output: |bias| + sum of |x·w| over its taps (the error scale)
};

/// The convolution in double over every output and tap; taps outside the
/// input (in the padding) contribute nothing.
inline ConvReferenceResult ReferenceConv(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                                         const std::vector<double>* b) {
  const ConvReferencePlan plan = PlanReferenceConv(c);
  const int spatial = static_cast<int>(c.x.size()) - 2;
  const int64_t n_count = c.x[0], channels = c.x[1], m_count = c.w[0];
  const int64_t cg = channels / c.group, mg = m_count / c.group;
  std::vector<int64_t> in(c.x.begin() + 2, c.x.end()), k(c.w.begin() + 2, c.w.end()),
      out(plan.out_shape.begin() + 2, plan.out_shape.end());
  const int64_t in_plane = Count(in), out_plane = Count(out), taps = Count(k);
  ConvReferenceResult r;
  r.shape = plan.out_shape;
  r.y.assign(Count(plan.out_shape), 0.0);
  r.magnitude.assign(r.y.size(), 0.0);
  std::vector<int64_t> o(spatial), t(spatial);
  for (int64_t n = 0; n < n_count; ++n)
    for (int64_t m = 0; m < m_count; ++m)
      for (int64_t oi = 0; oi < out_plane; ++oi) {
        for (int64_t a = spatial - 1, rest = oi; a >= 0; --a) {
          o[a] = rest % out[a];
          rest /= out[a];
        }
        double sum = b != nullptr ? (*b)[m] : 0.0;
        double mag = std::abs(sum);
        const int64_t g = m / mg;
        for (int64_t ci = 0; ci < cg; ++ci) {
          const int64_t ch = g * cg + ci;
          for (int64_t ti = 0; ti < taps; ++ti) {
            int64_t rest = ti, x_index = 0;
            bool inside = true;
            for (int a = spatial - 1; a >= 0; --a) {
              t[a] = rest % k[a];
              rest /= k[a];
            }
            for (int a = 0; a < spatial; ++a) {
              const int64_t s = c.strides.empty() ? 1 : c.strides[a];
              const int64_t d = c.dilations.empty() ? 1 : c.dilations[a];
              const int64_t pos = o[a] * s - plan.pad_begin[a] + t[a] * d;
              if (pos < 0 || pos >= in[a]) inside = false;
              x_index = x_index * in[a] + pos;
            }
            if (!inside) continue;
            const double xv = x[(n * channels + ch) * in_plane + x_index];
            const double wv = w[(m * cg + ci) * taps + ti];
            sum += xv * wv;
            mag += std::abs(xv * wv);
          }
        }
        const int64_t at = (n * m_count + m) * out_plane + oi;
        r.y[at] = sum;
        r.magnitude[at] = mag;
      }
  return r;
}

}  // namespace attune::testing
