// The prepared form of one MatMulNBits node's constants: the packed weights
// as the file has them (held, never copied or widened to float32), the
// scales in float32, the zero points unpacked to one byte (or float) per
// block, and the run-time product over them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/constant_holder.h"
#include "core/schema/quantized_matmul.h"
#include "ops/quantized/nbits_kernels.h"

namespace attune::quantized {

/// Holds a constant's tensor as it was: Restore hands back the same buffer.
class TensorHolder final : public ConstantHolder {
 public:
  explicit TensorHolder(Tensor tensor) : tensor_(std::move(tensor)) {}
  absl::StatusOr<Tensor> Restore() const override { return tensor_; }

 private:
  Tensor tensor_;
};

class NBitsWeights {
 public:
  /// Checks B, scales and zero points (zero_points may be empty) against the
  /// node's parameters and prepares them. B is kept as given.
  static absl::StatusOr<std::unique_ptr<NBitsWeights>> Create(const qmatmul::QuantizedMatMulParams& params,
                                                              const std::string& label, Tensor b, Tensor scales,
                                                              Tensor zero_points);

  const qmatmul::QuantizedMatMulParams& params() const { return params_; }
  const NBitsView& view() const { return view_; }
  /// The original constants, for the plan's holders (index: the input slot).
  const Tensor& original(int input) const;

  /// y[m, N] = a[m, K] · W (+ bias[N], may be null), float32, with `kernels`
  /// (a variant of AvailableNBitsKernels). Same bits for every thread count.
  absl::Status Multiply(const NBitsKernelSet& kernels, const float* a, int64_t m, const float* bias, float* y,
                        int threads) const;

 private:
  NBitsWeights() = default;
  void MultiplyRows(const NBitsKernelSet& kernels, const float* a, int64_t m, float* y, int threads) const;
  void MultiplyPanels(const NBitsKernelSet& kernels, const float* a, int64_t m, float* y, int threads) const;
  void MultiplyInt8Panels(const NBitsKernelSet& kernels, const float* a, int64_t m, float* y, int threads) const;
  bool Int8Activations() const;

  qmatmul::QuantizedMatMulParams params_;
  Tensor b_, scales_, zero_points_;     // the constants as the file had them
  std::vector<float> scales_f32_;       // when scales_ is float16
  std::vector<uint8_t> zero_points_u8_;  // packed uint8 zero points, one per block
  std::vector<float> zero_points_f32_;  // float zero points as float32
  bool nonfinite_scales_ = false;       // a scale is NaN or ±inf: dequantize every weight (panels)
  NBitsView view_;
};

}  // namespace attune::quantized
