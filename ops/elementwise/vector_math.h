// Vectorised float32 element-wise math: one kernel per function and ISA
// level, the table the active level selects (ops/common/cpu_features.h, the
// dispatch the flash attention kernels use), and the multithreaded entry
// points the element-wise ops call for float32 tensors. Error bounds and the
// dispatch rule are in README.md.
#pragma once

#include <cstdint>

#include "ops/common/cpu_features.h"

namespace attune::elementwise {

/// The functions with a vectorised float32 kernel.
enum class VectorOp { kExp, kLog, kTanh, kErf, kSigmoid, kSoftplus, kGeluErf, kGeluTanh, kMish, kHardSwish };
inline constexpr int kVectorOpCount = 10;

const char* VectorOpName(VectorOp op);

/// y[i] = op(x[i]) for i < n. y == x (in place) is allowed, other overlaps are not.
using VectorUnaryFn = void (*)(const float* x, float* y, int64_t n);
/// y[i] = x[i]^exponent by multiplications, 0 <= exponent <= kMaxPowIntExponent.
using VectorPowIntFn = void (*)(const float* x, float* y, int64_t n, int exponent);
/// y[i] = x[i] · sigmoid(alpha · x[i]), rounded as Mul, Sigmoid and Mul of
/// this level are (bit for bit the three ops it replaces).
using VectorSwishFn = void (*)(const float* x, float* y, int64_t n, float alpha);

/// Largest exponent the multiplication path takes; its error grows with the
/// number of multiplications (docs/onnx-ops.md lists it per exponent).
inline constexpr int kMaxPowIntExponent = 8;

/// One ISA level's kernels.
struct VectorMathKernels {
  const char* name;
  VectorUnaryFn unary[kVectorOpCount];
  VectorPowIntFn pow_int;
  VectorSwishFn swish;
};

namespace vector_math_generic {
const VectorMathKernels& Kernels();
}
namespace vector_math_avx2 {
const VectorMathKernels& Kernels();
}
namespace vector_math_avx512 {
const VectorMathKernels& Kernels();
}

/// The kernels of `isa`; the caller checks IsaSupported(isa).
const VectorMathKernels& VectorMathKernelsFor(Isa isa);

/// op over n elements with the active ISA level, split into static chunks
/// across up to `threads` threads (one OpenMP region) when n is large.
void RunVectorUnary(VectorOp op, const float* x, float* y, int64_t n, int threads);
/// x^exponent the same way; 0 <= exponent <= kMaxPowIntExponent.
void RunVectorPowInt(const float* x, float* y, int64_t n, int exponent, int threads);
/// x · sigmoid(alpha · x) the same way.
void RunVectorSwish(const float* x, float* y, int64_t n, float alpha, int threads);

}  // namespace attune::elementwise
