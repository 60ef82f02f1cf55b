// The schema of the half-size weight product: attune.HalfWeightMatMul,
// Y = A · Wᵀ (+ bias), with W float16 or bfloat16 [N, K] (K contiguous per
// output, the layout a row-streaming GEMV reads) and A and Y float32. It is
// what a float16 / bfloat16 weight behind a Cast to float32 becomes, and what
// `--weights bf16` compresses a float32 weight to: the 16-bit constant is the
// only copy held. With accuracy_level 1 (the default, and what a weight file
// gets: its Cast to float32 is exact) A stays float32 and W is widened in
// registers; with 3, which `--weights bf16` asks for unless told otherwise,
// A is rounded to bfloat16 too and the product runs at the bf16 rate.
#pragma once

#include <cstdint>

namespace attune::halfw {

inline constexpr char kDomain[] = "attune";
inline constexpr char kOpType[] = "HalfWeightMatMul";

// Input slots.
inline constexpr int kInputA = 0;     // float32 [..., K]
inline constexpr int kInputW = 1;     // float16 or bfloat16 [N, K], a constant
inline constexpr int kInputBias = 2;  // optional float32 [N]

// Attributes.
/// The lowest precision A may be rounded to, as MatMulNBits reads it: 1 keeps
/// float32, 3 rounds A to bfloat16 (bfloat16 W only); 2 and 4 read as 3.
inline constexpr char kAccuracyLevel[] = "accuracy_level";
inline constexpr int64_t kFloat32Activations = 1;
inline constexpr int64_t kBf16Activations = 3;

}  // namespace attune::halfw
