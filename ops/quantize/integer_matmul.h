// MatMulInteger's product with numpy batching, and the float epilogue the
// products that end in float32 share (MatMulIntegerToFloat,
// DynamicQuantizeMatMul and the fused dynamic-int8 product).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/matmul/matmul_shape.h"
#include "ops/quantize/integer_product.h"

namespace attune::quantize {

/// The shape of A·B for int8 / uint8 operands; errors name `label`.
absl::StatusOr<MatMulShape> PlanIntegerMatMul(const std::string& label, const Tensor& a, const Tensor& b);

/// Zero points as the product reads them: count 1 (per tensor), rows or
/// columns of one product, or that times the operand's batch count.
absl::StatusOr<std::vector<int32_t>> ReadZeroPoints(const std::string& label, const Tensor* zp, ElementType operand,
                                                    int64_t per_product, int64_t batches, const char* what);

/// out[...] = Σ_k (a − za)(b − zb) for every product of `s`, int32. `prepared`
/// (may be null) is B prepared once with its zero points, used when B is 2-D.
absl::Status RunIntegerMatMul(const MatMulShape& s, const Tensor& a, const std::vector<int32_t>& a_zps, const Tensor& b,
                              const std::vector<int32_t>& b_zps, const IntegerProduct* prepared, int32_t* out,
                              int threads);

/// out[r, c] = float(acc[r, c]) · (a_scale · b_scales[c]) (+ bias[c]), the
/// operations in that order, each rounded to float32 as the Cast, Mul and Add
/// nodes of the unfused graph round them. b_scales has 1 or n entries.
void ScaleToFloat(const int32_t* acc, int64_t rows, int64_t n, float a_scale, const std::vector<float>& b_scales,
                  const float* bias, float* out, int threads);

}  // namespace attune::quantize
