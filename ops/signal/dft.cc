// DFT (opsets 17, 20) and STFT (opset 17), by direct summation in double
// with a twiddle table indexed by (k * j) mod n, so the angles are exact.
// A signal's last axis has 1 (real) or 2 (real, imaginary) entries; the
// transform runs along `axis` (an attribute, default 1, at opset 17; an input,
// default -2, from 20), zero-padded or truncated to dft_length. Forward:
// X_k = sum_j x_j e^{-2 pi i jk/n}, onesided keeps n/2 + 1 bins. Inverse:
// x_j = 1/n sum_k X_k e^{+2 pi i jk/n}; inverse and onesided is the real
// inverse of a one-sided spectrum (numpy's irfft: the imaginary parts of the
// DC and Nyquist bins are ignored), whose output has one entry per sample.
#include <cmath>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/float_values.h"
#include "ops/common/node_label.h"
#include "ops/signal/kernels.h"

namespace attune {
namespace {

// cos and sin of 2 pi m / n for m in [0, n).
struct Twiddles {
  std::vector<double> cos, sin;
  explicit Twiddles(int64_t n) : cos(n), sin(n) {
    for (int64_t m = 0; m < n; ++m) {
      const double a = 2 * std::numbers::pi * static_cast<double>(m) / static_cast<double>(n);
      cos[m] = std::cos(a), sin[m] = std::sin(a);
    }
  }
};

// One line: `in` holds `in_len` complex values (re, im) at stride `in_stride`
// (in complex units); writes `out_len` complex bins of the n-point transform.
void TransformLine(const double* in, int64_t in_len, int64_t in_stride, double* out, int64_t out_len,
                   int64_t out_stride, const Twiddles& tw, bool inverse) {
  const int64_t n = static_cast<int64_t>(tw.cos.size());
  const int64_t used = std::min(in_len, n);
  for (int64_t k = 0; k < out_len; ++k) {
    double re = 0, im = 0;
    for (int64_t j = 0; j < used; ++j) {
      const int64_t m = (k * j) % n;
      const double c = tw.cos[m], s = inverse ? tw.sin[m] : -tw.sin[m];
      const double xr = in[2 * j * in_stride], xi = in[2 * j * in_stride + 1];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
    }
    if (inverse) re /= static_cast<double>(n), im /= static_cast<double>(n);
    out[2 * k * out_stride] = re;
    out[2 * k * out_stride + 1] = im;
  }
}

// Real inverse of a one-sided spectrum of `in_len` bins to n real samples.
void RealInverseLine(const double* in, int64_t in_len, int64_t in_stride, double* out, int64_t out_stride,
                     const Twiddles& tw) {
  const int64_t n = static_cast<int64_t>(tw.cos.size());
  const int64_t half = n / 2;
  auto bin = [&](int64_t k, int part) { return k < in_len ? in[2 * k * in_stride + part] : 0.0; };
  for (int64_t j = 0; j < n; ++j) {
    double sum = bin(0, 0);
    for (int64_t k = 1; k < (n + 1) / 2; ++k) {
      const int64_t m = (k * j) % n;
      sum += 2 * (bin(k, 0) * tw.cos[m] - bin(k, 1) * tw.sin[m]);
    }
    if (n % 2 == 0 && half > 0) sum += bin(half, 0) * ((j % 2 == 0) ? 1 : -1);
    out[j * out_stride] = sum / static_cast<double>(n);
  }
}

// Reads a scalar integer input (int32 or int64).
absl::StatusOr<int64_t> ScalarInt(const std::string& label, const Tensor& t, const char* name) {
  if (t.num_elements() != 1 || (t.type() != ElementType::kInt64 && t.type() != ElementType::kInt32))
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " must be one int32 or int64 value"));
  return t.type() == ElementType::kInt64 ? t.data<int64_t>()[0] : t.data<int32_t>()[0];
}

// A signal's values as complex pairs (imaginary 0 for a real signal).
absl::StatusOr<std::vector<double>> LoadComplex(const std::string& label, const Tensor& x) {
  ASSIGN_OR_RETURN(std::vector<double> v, LoadAsDoubles(x, absl::StrCat(label, ": input")));
  if (x.shape().back() == 2) return v;
  std::vector<double> c(2 * v.size(), 0.0);
  for (size_t i = 0; i < v.size(); ++i) c[2 * i] = v[i];
  return c;
}

class DftKernel final : public Kernel {
 public:
  DftKernel(std::string label, int opset, int64_t axis_attr, bool inverse, bool onesided)
      : label_(std::move(label)), opset_(opset), axis_attr_(axis_attr), inverse_(inverse), onesided_(onesided) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input"));
    const std::vector<int64_t>& xs = x->shape();
    const int64_t rank = static_cast<int64_t>(xs.size());
    if (rank < 2 || (xs.back() != 1 && xs.back() != 2))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": input has shape ", ShapeToString(xs),
                                                     "; expected [..., 1] (real) or [..., 2] (complex)"));
    int64_t axis = axis_attr_;
    if (opset_ >= 20 && ctx.input(2) != nullptr) {
      ASSIGN_OR_RETURN(axis, ScalarInt(label_, *ctx.input(2), "axis"));
    }
    if (axis < -rank || axis >= rank || (axis + rank) % rank == rank - 1)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": axis ", axis, " is out of range for input ",
                                                     ShapeToString(xs), " (the last axis holds re/im)"));
    axis = (axis + rank) % rank;
    const bool real_inverse = inverse_ && onesided_;
    int64_t n = real_inverse ? 2 * (xs[axis] - 1) : xs[axis];
    if (ctx.input(1) != nullptr) {
      ASSIGN_OR_RETURN(n, ScalarInt(label_, *ctx.input(1), "dft_length"));
    }
    if (n < 1)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": dft_length is ", n, "; it must be >= 1"));
    std::vector<int64_t> out_shape = xs;
    out_shape[axis] = onesided_ && !inverse_ ? n / 2 + 1 : n;
    out_shape.back() = real_inverse ? 1 : 2;
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
    ASSIGN_OR_RETURN(std::vector<double> in, LoadComplex(label_, *x));
    std::vector<double> out(static_cast<size_t>(y->num_elements()));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= xs[i];
    for (int64_t i = axis + 1; i < rank - 1; ++i) inner *= xs[i];
    const Twiddles tw(n);
    const int64_t in_len = xs[axis], out_len = out_shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const double* src = in.data() + 2 * (o * in_len * inner + i);
        if (real_inverse)
          RealInverseLine(src, in_len, inner, out.data() + o * out_len * inner + i, inner, tw);
        else
          TransformLine(src, in_len, inner, out.data() + 2 * (o * out_len * inner + i), out_len, inner, tw, inverse_);
      }
    return StoreDoubles(out, *y, absl::StrCat(label_, ": output"));
  }

 private:
  std::string label_;
  int opset_;
  int64_t axis_attr_;
  bool inverse_, onesided_;
};

// STFT: signal [batch, length, 1 or 2], frame_step, window [frame_length]
// (or ones), frame_length -> [batch, frames, bins, 2], frames =
// (length - frame_length) / frame_step + 1.
class StftKernel final : public Kernel {
 public:
  StftKernel(std::string label, bool onesided) : label_(std::move(label)), onesided_(onesided) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr || ctx.input(1) == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs signal and frame_step"));
    const std::vector<int64_t>& xs = x->shape();
    if (xs.size() != 3 || (xs[2] != 1 && xs[2] != 2))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": signal has shape ", ShapeToString(xs),
                                                     "; expected [batch, length, 1 or 2]"));
    ASSIGN_OR_RETURN(int64_t step, ScalarInt(label_, *ctx.input(1), "frame_step"));
    const Tensor* window = ctx.input(2);
    int64_t frame = window != nullptr ? (window->rank() == 1 ? window->shape()[0] : -1) : xs[1];
    if (ctx.input(3) != nullptr) {
      ASSIGN_OR_RETURN(frame, ScalarInt(label_, *ctx.input(3), "frame_length"));
    }
    if (window != nullptr && (window->rank() != 1 || window->shape()[0] != frame))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": window has shape ", ShapeToString(window->shape()),
                                                     "; expected [", frame, "]"));
    if (step < 1 || frame < 1 || frame > xs[1])
      return absl::InvalidArgumentError(absl::StrCat(label_, ": frame_step ", step, " and frame_length ", frame,
                                                     " must be >= 1, and the frame no longer than the signal (",
                                                     xs[1], ")"));
    const bool onesided = onesided_ && xs[2] == 1;
    const int64_t frames = (xs[1] - frame) / step + 1, bins = onesided ? frame / 2 + 1 : frame;
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), {xs[0], frames, bins, 2}));
    ASSIGN_OR_RETURN(std::vector<double> in, LoadComplex(label_, *x));
    std::vector<double> w(frame, 1.0);
    if (window != nullptr) {
      ASSIGN_OR_RETURN(w, LoadAsDoubles(*window, absl::StrCat(label_, ": window")));
    }
    std::vector<double> out(static_cast<size_t>(y->num_elements())), buf(2 * frame);
    const Twiddles tw(frame);
    for (int64_t b = 0; b < xs[0]; ++b)
      for (int64_t f = 0; f < frames; ++f) {
        const double* src = in.data() + 2 * (b * xs[1] + f * step);
        for (int64_t j = 0; j < frame; ++j) buf[2 * j] = src[2 * j] * w[j], buf[2 * j + 1] = src[2 * j + 1] * w[j];
        TransformLine(buf.data(), frame, 1, out.data() + 2 * (b * frames + f) * bins, bins, 1, tw, false);
      }
    return StoreDoubles(out, *y, absl::StrCat(label_, ": output"));
  }

 private:
  std::string label_;
  bool onesided_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeDftKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 1 || !info.input_present[0])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs input"));
  int64_t axis = -2;
  if (info.opset < 20) {
    ASSIGN_OR_RETURN(axis, info.attrs().GetInt("axis", 1));
  }
  ASSIGN_OR_RETURN(int64_t inverse, info.attrs().GetInt("inverse", 0));
  ASSIGN_OR_RETURN(int64_t onesided, info.attrs().GetInt("onesided", 0));
  if ((inverse != 0 && inverse != 1) || (onesided != 0 && onesided != 1))
    return absl::InvalidArgumentError(absl::StrCat(label, ": attributes 'inverse' and 'onesided' must be 0 or 1"));
  return std::make_unique<DftKernel>(std::move(label), info.opset, axis, inverse == 1, onesided == 1);
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeStftKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs signal and frame_step"));
  ASSIGN_OR_RETURN(int64_t onesided, info.attrs().GetInt("onesided", 1));
  if (onesided != 0 && onesided != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'onesided' must be 0 or 1"));
  return std::make_unique<StftKernel>(std::move(label), onesided == 1);
}

}  // namespace attune
