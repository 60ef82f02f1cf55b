// A bfloat16 weight product through oneDNN's bf16 · bf16 → f32 matmul, for
// attune.HalfWeightMatMul at accuracy_level 3: A arrives already rounded to
// bfloat16, every product of two bfloat16 values is exact in float32, and the
// sums run in float32 at twice the fp32 FMA rate (vdpbf16ps). W is packed
// once into the layout oneDNN prefers; the packed copy is the only one held.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/constant_holder.h"

namespace attune::quantized {

class Bf16PackedProduct {
 public:
  /// w: bfloat16 bits [N, K]. nullptr when this CPU's oneDNN cannot run a
  /// bf16 matmul (no AVX-512): the caller then widens W itself.
  static absl::StatusOr<std::unique_ptr<Bf16PackedProduct>> Create(const uint16_t* w, int64_t n, int64_t k);
  virtual ~Bf16PackedProduct() = default;

  /// y[m, N] = a[m, K] · Wᵀ (+ bias[N], may be null), a in bfloat16 bits.
  /// `threads` sets the OpenMP team for this call.
  virtual absl::Status Run(const uint16_t* a, int64_t m, const float* bias, float* y, int threads) const = 0;
  /// What holds W now: Restore() gives the [N, K] bfloat16 tensor back.
  virtual std::shared_ptr<const ConstantHolder> holder() const = 0;
};

}  // namespace attune::quantized
