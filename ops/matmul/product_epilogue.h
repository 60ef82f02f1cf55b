// What a fused product does to its result: y = act(a·b + bias) ⊙ multiplier.
// The bias is a row of the output's last dim (attune.FusedMatMul's input 2,
// a Linear layer's bias that torch exports as its own Add; FusedGemm has C),
// the activation is named by the `activation` attributes, and the multiplier
// is a tensor of the output's shape (the up projection of SwiGLU:
// act(x·W_gate) ⊙ (x·W_up)). Every path of the product (GEMV, row GEMM,
// transposed panel GEMM, oneDNN) runs it afterwards, in place, with the
// standalone ops' kernels, so each element is rounded as the Add, the
// activation op and the Mul round it.
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
  bool biased = false;      // a bias row is added first
  bool multiplied = false;  // then times the multiplier input, element by element

  bool empty() const { return activation == Activation::kNone && !multiplied && !biased; }
};

/// The epilogue a fused product's attributes ask for: `activation` ("Relu",
/// "Gelu", "Swish", or absent), `activation_approximate` ("none" or "tanh",
/// Gelu's) and `activation_alpha` (Swish's, finite); `multiplied` when the
/// node has its multiplier input. One clear line naming `label` otherwise.
absl::StatusOr<ProductEpilogue> ReadProductEpilogue(const std::string& label, const Attributes& attributes,
                                                    bool biased, bool multiplied);

/// Why a product of `type` cannot take `epilogue` (only float32 can), or OK.
absl::Status CheckEpilogueType(const std::string& label, const ProductEpilogue& epilogue, ElementType type);

/// Applies `epilogue` to a kernel's computed output 0, reading the bias
/// from input `bias_input` and the multiplier from `multiplier_input`; fails
/// with one line naming `label` when either is absent or not float32, the
/// bias is not one row of the output's last dim, or the multiplier not of
/// the output's shape.
absl::Status FinishProduct(const std::string& label, const ProductEpilogue& epilogue, KernelContext& ctx,
                           int bias_input, int multiplier_input);

/// c[r, j] = act(c[r, j] + bias[j]) (· multiplier[r, j]) for r < rows, j <
/// cols, c and the multiplier dense (the bias is read only when
/// epilogue.biased, the multiplier when epilogue.multiplied). Each element
/// is rounded as the standalone ops round it: one float addition, the
/// activation as the Gelu, Swish or Relu op computes it here, one float
/// multiplication.
void ApplyProductEpilogue(const ProductEpilogue& epilogue, float* c, const float* bias, const float* multiplier,
                          int64_t rows, int64_t cols, int threads);

}  // namespace attune
