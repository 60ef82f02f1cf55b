// What a fused product does to its result before the result is stored: an
// activation (attune.FusedMatMul and attune.FusedGemm's `activation`
// attributes) and then a product with a tensor of the output's elements (the
// up projection of SwiGLU: act(x·W_gate) ⊙ (x·W_up)). oneDNN applies both as
// post-ops while the tile is in registers (onednn_matmul.cc); the GEMV, the
// row GEMM and the general products apply them here, over rows still in cache.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "ops/kernel.h"

namespace attune {

struct ProductEpilogue {
  enum class Activation { kNone, kRelu, kGeluTanh, kGeluErf, kSwish };
  Activation activation = Activation::kNone;
  float alpha = 1.0f;       // Swish's: x · sigmoid(alpha · x)
  bool multiplied = false;  // then times the multiplier input, element by element

  bool empty() const { return activation == Activation::kNone && !multiplied; }
};

/// The epilogue a fused product's attributes ask for: `activation` ("Relu",
/// "Gelu", "Swish", or absent), `activation_approximate` ("none" or "tanh",
/// Gelu's) and `activation_alpha` (Swish's, finite); `multiplied` when the
/// node has its multiplier input. One clear line naming `label` otherwise.
absl::StatusOr<ProductEpilogue> ReadProductEpilogue(const std::string& label, const Attributes& attributes,
                                                    bool multiplied);

/// The attributes ReadProductEpilogue reads back as `epilogue`'s activation.
void WriteProductActivation(const ProductEpilogue& epilogue, Attributes& attributes);

/// Why a product of `type` cannot take `epilogue` (only float32 can), or OK.
absl::Status CheckEpilogueType(const std::string& label, const ProductEpilogue& epilogue, ElementType type);

/// Applies `epilogue` to a kernel's computed output 0, reading the
/// multiplier from input `multiplier_input`; fails with one line naming
/// `label` when the multiplier is absent, not float32 or not of the
/// output's shape.
absl::Status FinishProduct(const std::string& label, const ProductEpilogue& epilogue, KernelContext& ctx,
                           int multiplier_input);

/// c[r, j] = act(c[r, j]) (· multiplier[r, j]) for r < rows, j < cols: rows
/// of c `c_stride` floats apart, of the multiplier `multiplier_stride` apart
/// (the multiplier is read only when epilogue.multiplied). Each element is
/// rounded as the standalone ops round it: the activation as the Gelu, Swish
/// or Relu op computes it here, then one float multiplication.
void ApplyProductEpilogue(const ProductEpilogue& epilogue, float* c, int64_t c_stride, const float* multiplier,
                          int64_t multiplier_stride, int64_t rows, int64_t cols, int threads);

}  // namespace attune
