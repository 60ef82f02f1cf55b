// The geometry of ONNX's windowed pools (MaxPool, AveragePool, LpPool): the
// attributes read and checked once per node, and per run the output size of
// every spatial axis, which the kernels and the shape rule compute alike.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/attribute.h"
#include "ops/conv/conv_params.h"

namespace attune {

/// A pool's attributes (auto_pad, kernel_shape, strides, dilations and pads
/// as Conv reads them; kernel_shape required).
struct PoolAttributes {
  ConvAttributes window;
  bool ceil_mode = false;
  bool count_include_pad = false;  // AveragePool
  int64_t storage_order = 0;       // MaxPool's Indices: 0 row-major, 1 column-major
  double p = 2;                    // LpPool
};

/// LpPool's and GlobalLpPool's p: a float at opset 1, an int after; default 2, positive.
absl::StatusOr<double> ReadLpPoolP(const std::string& label, int opset, const Attributes& attrs);

/// Reads the attributes of `op` ("MaxPool", "AveragePool" or "LpPool") at
/// `opset`; InvalidArgument naming `label` and the attribute otherwise.
absl::StatusOr<PoolAttributes> ReadPoolAttributes(const std::string& label, std::string_view op, int opset,
                                                  const Attributes& attrs);

/// The output size and pads of one spatial axis, as ONNX's reference
/// computes them: NOTSET floor (or ceil) of (in + pads - dilated kernel) /
/// stride + 1, where under ceil_mode a last window that would start in the
/// end padding is dropped; VALID the same with zero pads; SAME_* ceil(in /
/// stride), padded by the shortfall, its odd part at the end (UPPER) or the
/// beginning (LOWER).
absl::StatusOr<ConvAxis> PoolOutputAxis(const std::string& label, int axis, int64_t in, int64_t kernel,
                                        int64_t stride, int64_t dilation, int64_t pad_begin, int64_t pad_end,
                                        ConvAutoPad auto_pad, bool ceil_mode);

/// Everything a run computes from X's shape.
struct PoolGeometry {
  int64_t batch = 0, channels = 0;
  std::vector<int64_t> input, kernel, output, strides, dilations, pad_begin, pad_end;
  int spatial_rank() const { return static_cast<int>(input.size()); }
  std::vector<int64_t> output_shape() const;
};

/// Checks X [N, C, D...] against the attributes and sizes the output.
absl::StatusOr<PoolGeometry> PlanPool(const std::string& label, const PoolAttributes& attrs,
                                      const std::vector<int64_t>& x);

}  // namespace attune
