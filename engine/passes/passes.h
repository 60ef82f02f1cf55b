// Factories of the optimiser's passes, one file each in engine/passes/.
#pragma once

#include <cstdint>
#include <memory>

#include "attune/session.h"
#include "engine/passes/pass.h"

namespace attune {

/// Evaluates nodes whose inputs are all constant (Constant nodes included).
std::unique_ptr<Pass> MakeConstantFoldingPass();
/// Propagates element types and symbolic shapes through the graph.
std::unique_ptr<Pass> MakeShapeInferencePass();
/// Folds Shape→Gather→Unsqueeze→Concat chains into constants or symbolic shapes.
std::unique_ptr<Pass> MakeShapeFoldingPass();
/// A two-operand Einsum that is a batched matrix product -> Transpose + MatMul (+ Transpose).
std::unique_ptr<Pass> MakeEinsumToMatMulPass();
/// Removes provably neutral arithmetic (x*1, x/1, x+0, x-0) and scales ConstantOfShape fills.
std::unique_ptr<Pass> MakeAlgebraicSimplifyPass();
/// A constant scale after a Where mask moved onto its branches: (Where(c, s, F) / k) -> Where(c, s / k, F / k).
std::unique_ptr<Pass> MakeScaleBeforeMaskPass();
/// torch's unrolled repeat_interleave (Split into ones, per piece Unsqueeze, Expand, Reshape, Concat)
/// joined into the one Unsqueeze, Expand, Reshape it computes on the whole tensor.
std::unique_ptr<Pass> MakeJoinUnrolledRepeatPass();
/// Heads merged into the batch ((B, H, T, X) viewed as (B*H, T, X), bmm, viewed back) computed on the
/// 4-D tensors: the region between head merges and the view back, proven by the symbolic shapes.
std::unique_ptr<Pass> MakeUnmergeHeadsPass();
/// Query heads folded into the query axis (GPTBigCode's multi-query: (B, T*H, D) times one key head
/// (B, D, S), scores viewed (B, T, H, S)) computed on (B, H, T, ·) heads, proven by the symbolic shapes.
std::unique_ptr<Pass> MakeUnfoldQueryHeadsPass();
/// An inference BatchNormalization after a Conv with constant weights folded into them.
std::unique_ptr<Pass> MakeConvBatchNormFoldPass();
/// Merges nodes with the same op, attributes and inputs.
std::unique_ptr<Pass> MakeCommonSubexpressionPass();
/// Removes nodes whose outputs nobody needs.
std::unique_ptr<Pass> MakeDeadCodePass();
/// Replaces proven attention subgraphs with attune.MultiHeadAttention.
std::unique_ptr<Pass> MakeAttentionFusionPass();
/// GELU written out (erf and tanh forms) -> Gelu; x·sigmoid(alpha·x) -> Swish.
std::unique_ptr<Pass> MakeElementwiseFusionPass();
/// w · x / sqrt(mean(x², -1) + eps) written out -> RMSNormalization.
std::unique_ptr<Pass> MakeRmsNormFusionPass();
/// Norm(x + skip) -> attune.SkipLayerNormalization / SkipRMSNormalization (Y, x + skip).
std::unique_ptr<Pass> MakeSkipNormFusionPass();
/// MatMul(A, Transpose(B) of the last two axes) -> attune.FusedMatMul(A, B, trans_b=1).
std::unique_ptr<Pass> MakeTransposedMatMulPass();
/// A bias row, Gelu / Swish / Relu of a product, and SwiGLU's Mul, folded into
/// the product (attune.FusedMatMul / attune.FusedGemm with an epilogue).
std::unique_ptr<Pass> MakeProductEpilogueFusionPass();
/// A residual Add and an activation folded into the Conv they read (attune.FusedConv).
std::unique_ptr<Pass> MakeConvEpilogueFusionPass();
/// Convolution outputs read only by convolutions kept channels last (attune.FusedConv layouts).
std::unique_ptr<Pass> MakeConvLayoutPass();
/// Trees of float32 element-wise ops -> attune.ElementwiseChain (one pass over memory).
std::unique_ptr<Pass> MakeElementwiseChainPass();
/// Every product with a constant float B -> com.microsoft.MatMulNBits with B
/// quantized (int8 / int4) or attune.HalfWeightMatMul (bf16) as `options`
/// says; with WeightFormat::kAsIs only those whose B is a float16 / bfloat16
/// constant behind a Cast, as attune.HalfWeightMatMul.
std::unique_ptr<Pass> MakeWeightCompressionPass(const WeightCompressionOptions& options);
/// Largest tensor the fusion's probes (mask proof, verification) may create;
/// a probe above it fails with ResourceExhausted, and the fusion says so.
inline constexpr int64_t kFusionProbeMaxTensorBytes = int64_t{256} << 20;

}  // namespace attune
