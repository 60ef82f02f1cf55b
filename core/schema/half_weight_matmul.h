// The schema of the half-size weight product: attune.HalfWeightMatMul,
// Y = A · Wᵀ (+ bias), with W float16 or bfloat16 [N, K] (K contiguous per
// output, the layout a row-streaming GEMV reads) and A and Y float32. It is
// what a float16 / bfloat16 weight behind a Cast to float32 becomes, and what
// `--weights bf16` compresses a float32 weight to: the 16-bit constant is the
// only copy held, widened to float32 in registers.
#pragma once

namespace attune::halfw {

inline constexpr char kDomain[] = "attune";
inline constexpr char kOpType[] = "HalfWeightMatMul";

// Input slots.
inline constexpr int kInputA = 0;     // float32 [..., K]
inline constexpr int kInputW = 1;     // float16 or bfloat16 [N, K], a constant
inline constexpr int kInputBias = 2;  // optional float32 [N]

}  // namespace attune::halfw
