// float32 Conv through oneDNN. This file pair is the only code that includes
// oneDNN's convolution API: the 2.x op-descriptor API used here changes in
// 3.x, so the rest of the engine sees only this class.
#pragma once

#include <cstddef>
#include <memory>

#include "absl/status/statusor.h"
#include "ops/conv/conv_epilogue.h"
#include "ops/conv/conv_params.h"

namespace attune {

/// What a call adds to the plain convolution: the epilogue's activation
/// where oneDNN applies it exactly (ConvEpilogue::OnOneDnn; the rest is the
/// caller's), and the layouts of X and Y: channels last (nwc / nhwc / ndhwc)
/// instead of ONNX's channels first.
struct OneDnnConvOptions {
  ConvEpilogue epilogue;
  bool x_channels_last = false;
  bool y_channels_last = false;
};

/// One Conv node's oneDNN primitives. X and Y are plain ncw / nchw / ncdhw
/// (or nwc / nhwc / ndhwc, OneDnnConvOptions), W plain oiw / oihw / oidhw
/// (goiw... with groups); the convolution runs on the layouts oneDNN picks
/// for it (channels last for float32 here, where its brgemm kernels run), X
/// and Y reordered in and out on each call where those differ. Primitives (with
/// their scratchpad size and reorders) are created per geometry and team
/// size and cached, least recently used out first. Run is thread-safe.
class OneDnnConv {
 public:
  OneDnnConv();
  ~OneDnnConv();
  OneDnnConv(const OneDnnConv&) = delete;
  OneDnnConv& operator=(const OneDnnConv&) = delete;

  /// Whether oneDNN is tried for this geometry at all: every channel count
  /// and size positive, and every tensor within oneDNN's int32 offsets.
  static bool Takes(const ConvGeometry& g);

  /// y = conv(x, w) + b (b may be null), as ConvReference computes it, on a
  /// team of `threads` (> 0). Constant weights are reordered into the
  /// convolution's layout once and kept; other weights on every call. Returns false, having written nothing, when
  /// oneDNN has no implementation for the geometry (the caller falls back);
  /// a failure of a created primitive is an error.
  absl::StatusOr<bool> Run(const ConvGeometry& g, const float* x, const float* w, bool weights_constant,
                           const float* b, float* y, int threads, const OneDnnConvOptions& options = {}) const;

  /// Primitives (and refusals) cached, for tests.
  size_t cached() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace attune
