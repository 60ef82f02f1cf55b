// What the lowerings of com.microsoft.Attention and MultiHeadAttention share:
// their masks (mask_index / key_padding_mask, attention_bias) turned into
// attune.MultiHeadAttention's key padding or explicit mask, the attributes
// that give ONNX Runtime's scores to hidden keys, and the reshapes both need.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/passes/contrib/lowering_kit.h"

namespace attune::contrib {

/// The mask inputs of the fused op.
struct FusedMask {
  Value* explicit_mask = nullptr;  // input 3: additive float
  Value* key_padding = nullptr;    // input 6: bool [B, T]
  bool bias_into_mask = false;     // input 3 is attention_bias next to a key padding
  const char* kind = "none";       // for the report
};

/// ONNX Runtime's masks, at the shapes its CPU kernels read them:
/// `mask` (int32; [B] ends, [2B] ends and starts, [B, T] -> key padding;
/// [B, S, T], [B, 1, M, M] -> an additive mask of `fill`), `bias` ([B|1, N|1, S, T]
/// added to the scores). `query` [B, S, ...], `key` ([B, L, ...], [B, N, L, H] or
/// nullptr for L = S) and `past_key` (or nullptr) give the key count at run time.
/// `mask_name` names the input in errors. A rank the shapes do not show yet waits.
absl::StatusOr<FusedMask> LowerMasks(Lowering& l, const char* mask_name, Value* mask, Value* bias, Value* query,
                                     Value* key, Value* past_key, float fill);

/// The fused op's attributes for num_heads, scale (0: 1/sqrt(head)), causal and
/// the mask: a key the padding hides scores s + fill, a key the causal part
/// hides s + lowest (both: lowest), as ONNX Runtime adds its mask to the scores.
Attributes FusedAttributes(int64_t heads, float scale, bool causal, const FusedMask& mask, float fill);

/// x with a new axis of 1 at `axis` (Unsqueeze in the graph's opset's form).
Value* Unsqueezed(Lowering& l, Value* x, int64_t axis);
/// Split of x on `axis` into `sizes` (the graph's opset's form).
std::vector<Value*> SplitInto(Lowering& l, Value* x, int64_t axis, const std::vector<int64_t>& sizes);
/// Reshape of x to `shape` (0 keeps a dim, -1 is inferred).
Value* Reshaped(Lowering& l, Value* x, const std::vector<int64_t>& shape);
/// Transpose of x by `perm`.
Value* Transposed(Lowering& l, Value* x, const std::vector<int64_t>& perm);

/// num_heads > 0, read and checked.
absl::StatusOr<int64_t> HeadsAttr(const Lowering& l);

}  // namespace attune::contrib
