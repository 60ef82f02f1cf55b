// The schema of attune.MultiHeadAttention, the fused attention op: its name,
// attribute names, input and output slots, and the values of its string
// attributes and of the mask kind the fusion report gives it. The fusion that
// writes the op, the kernel that reads it, its shape rule, the ONNX exporter
// and the reports all spell these through here, so that a name cannot drift
// between the writer and a reader.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace attune {
class Node;
}  // namespace attune

namespace attune::mha {

inline constexpr char kDomain[] = "attune";
inline constexpr char kOpType[] = "MultiHeadAttention";

// Attribute names. Every attribute is optional.
inline constexpr char kNumHeads[] = "num_heads";        // int > 0: query heads (3-D inputs need it)
inline constexpr char kKvNumHeads[] = "kv_num_heads";   // int > 0: key/value heads (default num_heads)
inline constexpr char kScale[] = "scale";               // float: multiplies Q·Kᵀ (default 1/√head_dim)
inline constexpr char kCausal[] = "causal";             // 0 or 1: a causal mask aligned bottom-right
inline constexpr char kWindow[] = "window";             // int >= 0: > 0 limits a query to that many keys back
inline constexpr char kSoftcap[] = "softcap";           // float >= 0: scores become softcap·tanh(s/softcap)
inline constexpr char kMaskedRows[] = "masked_rows";    // a MaskedRows name (default "zeros")
inline constexpr char kHiddenFills[] = "hidden_fills";  // 3 floats: the scores of keys hidden by [causal, padding, both]
// 3 flags [causal, padding, both], default [0, 0, 0]: 1 when that part's fill
// is added to the key's score (s + fill, an additive mask) rather than
// replacing it (the fill alone), in rows with no visible key.
inline constexpr char kHiddenFillsAddScores[] = "hidden_fills_add_scores";
inline constexpr char kKeyPadding[] = "key_padding";    // a KeyPaddingValues name (default "binary")
inline constexpr char kKeyPaddingLength[] = "key_padding_length";  // a KeyPaddingLength name (default "keys")
// 2 flags [causal/window part, attn_mask or key padding], default [1, 1]: 1
// when that part adds to a hidden key's score (a NaN or +inf score there
// still makes its row NaN), 0 when it replaces the score (Where).
inline constexpr char kHiddenNonFinite[] = "hidden_nonfinite";
inline constexpr char kNanGuard[] = "nan_guard";  // 0 or 1: Where(IsNaN(p), 0, p) after the softmax
// float > 0 (default: float32's range): the subgraph's scores are +-inf where
// |Q·Kᵀ| (before `scale`) reaches it, as float16 scores overflow at 65520.
inline constexpr char kScoreLimit[] = "score_limit";
// "float16" or "bfloat16" (default: none): the subgraph computes its scores in
// that type and adds its mask there, and a row whose every key is hidden is
// computed as it does: Q·K accumulated in float32 key by key and rounded to
// the type, the scale step (score_divisor, or times `scale`) rounded to it,
// each hidden key's fill added in the type (hidden_fills_add_scores) or
// given, then max(·, its score_floors entry).
inline constexpr char kScoreRounding[] = "score_rounding";
// float > 0: with score_rounding, the subgraph divides its scores by this
// (the fused op still multiplies by `scale`, which is its inverse rounded).
inline constexpr char kScoreDivisor[] = "score_divisor";
// 4 floats [visible, causal, padding, both], default -inf: with
// score_rounding, the floor each key's masked score is clamped at
// (torch.max(w, finfo.min)); a visible key's score is -inf only where it
// overflows, and gets its floor there.
inline constexpr char kScoreFloors[] = "score_floors";
// int > 0: the subgraph's mask is read from a buffer of this many positions
// and cannot be computed for more keys (past + new): the op refuses more, as
// the subgraph does. Absent: any length.
inline constexpr char kMaxKvLen[] = "max_kv_len";

// 0, 1 or 2: input 3 is a position bias (ALiBi, T5's relative bias) that the
// subgraph adds to the scaled scores next to its causal/window part and its key
// padding. Its entries are scores, not a mask: a -inf entry is a -inf score (a
// row of them takes the fills of the keys the masks hide), and it may come with
// input 6. 1: (scores + bias), then the masks (MPT); 2: scores + (bias + mask)
// (T5 adds its mask into the bias), which differ in what a hidden key's score
// is when the bias is huge. 0 (default): input 3 is an explicit mask.
inline constexpr char kPositionBias[] = "position_bias";
inline constexpr int64_t kBiasOnScores = 1;
inline constexpr int64_t kBiasIntoMask = 2;

/// Every attribute the op has; any other is refused.
inline constexpr std::string_view kAttributes[] = {kNumHeads,   kKvNumHeads, kScale,      kCausal,
                                                   kWindow,     kSoftcap,    kMaskedRows, kHiddenFills,
                                                   kKeyPadding, kKeyPaddingLength, kHiddenNonFinite, kNanGuard,
                                                   kHiddenFillsAddScores, kScoreLimit, kPositionBias,
                                                   kScoreRounding, kScoreDivisor, kScoreFloors, kMaxKvLen};

/// Input slots; an absent optional input is an empty name (or a shorter list).
enum Input : int {
  kInputQ = 0,            // [B, T, H·D] or [B, H, T, D]
  kInputK = 1,            // like Q with kv_num_heads
  kInputV = 2,
  kInputMask = 3,         // optional explicit mask: bool keeps where true, float is added to the scores
                          // (with position_bias = 1: the float position bias, added to the scores)
  kInputPastKey = 4,      // optional [B, kv_heads, P, D]
  kInputPastValue = 5,
  kInputKeyPadding = 6,   // optional [B, P + T]: 0 pads a key (which other values show: key_padding)
  // optional [num_heads] float: an attention sink per query head, a logit that
  // joins each row's softmax denominator and weights no value (the subgraph
  // concatenates it as one more key column and slices it off after the softmax).
  kInputSinks = 7,
  kNumInputs = 8,
};

/// Output slots.
enum Output : int {
  kOutputY = 0,
  kOutputPresentKey = 1,    // past key followed by K, [B, kv_heads, P + T, D]
  kOutputPresentValue = 2,
  // optional [B, num_heads, T, P + T]: the softmax probabilities the output
  // weights V with, as the replaced subgraph's Softmax gives them (the
  // attention weights nn.MultiheadAttention returns with need_weights=True):
  // hidden keys 0, a row with no visible key as masked_rows says. Computed
  // row by row; the flash kernels run when it is not asked for.
  kOutputProbabilities = 3,
  kNumOutputs = 4,
};

/// What a query row outputs when every key is hidden to it (by the
/// structural masks and -inf mask entries together): the masked_rows
/// attribute. A fused op must give what the subgraph it replaces gives there.
enum class MaskedRows {
  kZeros,    // "zeros": zeros (ONNX Attention in Attune; never NaN)
  kNaN,      // "nan": NaN, as softmax over a row of -inf scores gives
  kUniform,  // "uniform": equal weights over all keys (the mean of V), as
             // softmax gives over a row whose scores all equal one finite fill
  kFills,    // "fills": softmax over the scores the subgraph gives its hidden
             // keys, by what hides each key (hidden_fills)
};

/// Which values of the key padding input (input 6) the fusion proved the
/// op for: the key_padding attribute.
enum class KeyPaddingValues {
  kBinary,   // "binary": 0 pads, 1 shows; any other value is refused (the subgraph gives it no mask meaning)
  kNonzero,  // "nonzero": 0 pads, any other value shows
};

/// Which lengths of the key padding input's last dim (L, against the S keys
/// past + new) the op takes, as the subgraph it replaces does: the
/// key_padding_length attribute.
enum class KeyPaddingLength {
  kKeys,       // "keys": L == S, one entry per key; any other L is refused
  kBroadcast,  // "broadcast": as ONNX broadcasts the padding into the scores:
               // L == S per key, L == 1 one entry for every key; any other L is refused
  // "broadcast_viewed": as kBroadcast, and the subgraph then views the masked
  // scores back to S keys: with S == 1 a longer L broadcasts the scores to L
  // keys, which that view refuses unless they are empty (no batch or no query
  // row), where it takes any L.
  kBroadcastViewed,
};

/// How a fused op masks its keys, as the fusion report describes it (not an
/// attribute: it follows from causal, window and which inputs are given).
enum class MaskKind {
  kNone,           // "none": every key is visible
  kCausal,         // "causal"
  kWindow,         // "window": causal within a sliding window
  kExplicit,       // "explicit": the mask input
  kPadding,        // "padding": key padding only
  kCausalPadding,  // "causal+padding"
  kWindowPadding,  // "window+padding"
};

/// The name a value is written as (a C string: Debian's Abseil takes no std::string_view in StrCat).
const char* ToString(MaskedRows rows);
const char* ToString(KeyPaddingValues values);
const char* ToString(KeyPaddingLength length);
const char* ToString(MaskKind kind);
/// The report's mask name of a kind with a position bias added to the scores
/// as well: "bias" for none, else the kind's name + "+bias" ("causal+padding+bias").
std::string ToStringWithBias(MaskKind kind);

/// The suffix a position bias adds to a mask name.
inline constexpr char kBiasSuffix[] = "+bias";

/// The value a name stands for; InvalidArgument naming every allowed value otherwise.
absl::StatusOr<MaskedRows> ParseMaskedRows(std::string_view name);
absl::StatusOr<KeyPaddingValues> ParseKeyPaddingValues(std::string_view name);
absl::StatusOr<KeyPaddingLength> ParseKeyPaddingLength(std::string_view name);
/// Also reads the names ToStringWithBias gives, as the kind without the bias.
absl::StatusOr<MaskKind> ParseMaskKind(std::string_view name);

/// The kind with a key padding input added (none -> padding, causal ->
/// causal+padding, window -> window+padding); others are returned as they are.
MaskKind WithKeyPadding(MaskKind kind);
/// The structural part of a kind: none, causal, window or explicit.
MaskKind WithoutKeyPadding(MaskKind kind);

/// Whether `node` is an attune.MultiHeadAttention.
bool IsMultiHeadAttention(const Node& node);

}  // namespace attune::mha
