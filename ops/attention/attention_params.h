// The one parameter block both attention ops (attune.MultiHeadAttention and
// ONNX Attention) are mapped onto; everything after attribute parsing is shared.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "core/schema/multi_head_attention.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/kernel.h"

namespace attune::attention {

/// Where the causal diagonal sits when there are more keys than queries.
enum class CausalAlignment {
  /// The last query sees the last key: offset = total_kv_len - q_len.
  kBottomRight,
  /// ONNX Attention: offset = past length when past_key is given, else
  /// nonpad_kv_seqlen[b] - q_len when that input is given, else 0 (top-left).
  kOnnx,
};

/// Which intermediate ONNX Attention's optional 4th output holds. The numbers
/// follow the order of the computation: scale, softcap, mask, softmax.
enum class QkOutputMode : int {
  kScaled = 0,      // scale·Q·Kᵀ
  kSoftcapped = 1,  // after the softcap (equal to kScaled without softcap)
  kMasked = 2,      // after adding the mask, causal and padding biases (-inf where hidden)
  kSoftmax = 3,     // the attention probabilities
};

/// How a mask whose last dimension is shorter than the total key count is read.
enum class ShortMaskKeys {
  kBroadcast,  // numpy rule: only a last dimension of 1 is allowed, and it broadcasts
  kHide,       // ONNX Attention: the missing trailing keys are masked out (padding with -inf / false)
};

/// What a key padding mask's entries may hold (the fusion's proof says
/// which reading the replaced subgraph has): the fused op's key_padding.
using mha::KeyPaddingValues;
/// Which lengths of the key padding input the op takes: the fused op's key_padding_length.
using mha::KeyPaddingLength;

struct AttentionParams {
  const char* op_name = "attention";  // for error messages
  /// Head counts from attributes; 0 when not given (then taken from 4-D
  /// shapes, and kv_heads defaults to q_heads).
  int64_t q_heads = 0;
  int64_t kv_heads = 0;
  /// Multiplies Q·Kᵀ; 1/√head_dim when not given.
  std::optional<float> scale;
  bool causal = false;
  CausalAlignment alignment = CausalAlignment::kBottomRight;
  /// > 0: a query sees itself and the window - 1 keys before it (keys are
  /// bounded on the left only; with causal this is a sliding window).
  int64_t window = 0;
  /// > 0: scores become softcap·tanh(scores/softcap) before the mask is added.
  float softcap = 0.0f;
  QkOutputMode qk_output_mode = QkOutputMode::kScaled;
  ShortMaskKeys short_mask_keys = ShortMaskKeys::kBroadcast;
  /// Whether input 6 (nonpad_kv_seqlen) exists in this op version.
  bool accepts_nonpad_kv_seqlen = false;
  /// What a query row that sees no key outputs (MultiHeadAttention's
  /// masked_rows; ONNX Attention: zeros).
  MaskedRows masked_rows = MaskedRows::kZeros;
  /// With MaskedRows::kFills: the scores the subgraph gives hidden keys.
  HiddenFills hidden_fills;
  /// MultiHeadAttention's hidden_nonfinite [structural, bias] (1: the mask
  /// adds to a hidden score, so NaN and +inf reach the softmax; 0: Where
  /// replaces it) and nan_guard; ONNX Attention adds both masks, unguarded.
  HiddenNonFinite hidden_nonfinite;
  bool nan_rows_zeroed = false;
  /// |Q·Kᵀ| (before the scale) at which the subgraph's scores are infinite (mha::kScoreLimit).
  float score_limit = std::numeric_limits<float>::infinity();
  /// MultiHeadAttention's position_bias: the mask input is a position bias
  /// added to the scores before the causal part and the key padding hide keys.
  bool position_bias = false;
  /// position_bias = 2: the subgraph adds the bias into its mask, then that to the scores.
  bool bias_into_mask = false;
  /// > 0: the most keys (past + new) the replaced subgraph's mask buffer covers (mha::kMaxKvLen).
  int64_t max_kv_len = 0;
  /// Whether input 6 is a key padding mask (MultiHeadAttention), and which
  /// of its values the fusion was proven for.
  KeyPaddingValues key_padding_values = KeyPaddingValues::kBinary;
  KeyPaddingLength key_padding_length = KeyPaddingLength::kKeys;
};

/// Input and output positions, the same for both ops (MultiHeadAttention's
/// are its schema's).
inline constexpr int kInputQ = mha::kInputQ;
inline constexpr int kInputK = mha::kInputK;
inline constexpr int kInputV = mha::kInputV;
inline constexpr int kInputMask = mha::kInputMask;
inline constexpr int kInputPastKey = mha::kInputPastKey;
inline constexpr int kInputPastValue = mha::kInputPastValue;
inline constexpr int kInputNonpadKvSeqlen = 6;  // ONNX Attention (opset 24)
inline constexpr int kInputKeyPadding = mha::kInputKeyPadding;
inline constexpr int kInputSinks = mha::kInputSinks;  // MultiHeadAttention only
inline constexpr int kOutputY = mha::kOutputY;
inline constexpr int kOutputPresentKey = mha::kOutputPresentKey;
inline constexpr int kOutputPresentValue = mha::kOutputPresentValue;
inline constexpr int kOutputQk = 3;  // ONNX Attention's qk_matmul_output, MultiHeadAttention's probabilities
static_assert(kOutputQk == mha::kOutputProbabilities);

/// attune.MultiHeadAttention: the attributes of core/schema/multi_head_attention.h.
absl::StatusOr<AttentionParams> ParseMultiHeadAttentionParams(const KernelInfo& info);
/// ONNX Attention (opset 23, 24): is_causal, q_num_heads, kv_num_heads, scale,
/// softcap, qk_matmul_output_mode, softmax_precision.
absl::StatusOr<AttentionParams> ParseOnnxAttentionParams(const KernelInfo& info);

}  // namespace attune::attention
