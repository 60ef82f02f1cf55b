// The arguments of one fused attention computation, in the form every
// implementation (reference, oneDNN, SIMD flash per ISA) takes.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "absl/status/status.h"
#include "attune/element_type.h"
#include "core/schema/multi_head_attention.h"
#include "ops/attention/attention_backend.h"
#include "ops/kernel.h"

namespace attune::attention {

/// A [batch][heads][seq][dim] float view whose last dimension is contiguous;
/// any other stride may be anything (0 broadcasts), so both B,H,T,D and
/// B,T,H·D layouts are read in place.
struct StridedView {
  const float* data = nullptr;
  int64_t stride_batch = 0;
  int64_t stride_head = 0;
  int64_t stride_seq = 0;
};

/// What a query row outputs when every key is hidden to it: the fused op's
/// masked_rows policy (core/schema/multi_head_attention.h).
using mha::MaskedRows;

/// With MaskedRows::kFills: the score the replaced subgraph gives a hidden
/// key, by what hides it. A causal-plus-padding mask built as
/// Where(causal, s, min) + (1 - attention_mask) * min gives min to keys one
/// part hides and -inf (min + min) to keys both hide, so a row whose every
/// key is hidden averages V over the keys exactly one part hides.
///
/// A part whose fill is added to the scores (an additive mask with a finite
/// fill, (1 - attention_mask) * -10000) gives its hidden keys s + fill there:
/// the row is then the softmax of those scores, not of constants.
struct HiddenFills {
  float causal = -std::numeric_limits<float>::infinity();   // by the causal or window part only
  float padding = -std::numeric_limits<float>::infinity();  // by the key padding only
  float both = -std::numeric_limits<float>::infinity();     // by both
  bool causal_adds_score = false;
  bool padding_adds_score = false;
  bool both_adds_score = false;
  /// The subgraph's scores and mask steps are float16 or bfloat16
  /// (MultiHeadAttention's score_rounding; kFloat32: they are not): such a
  /// row is computed as HalfScore says, with the scale step dividing by
  /// `divisor` when it is > 0 (else multiplying by AttentionArgs::scale) and
  /// each key's masked score clamped at its floor [visible, causal, padding, both].
  ElementType rounding = ElementType::kFloat32;
  bool half() const { return rounding != ElementType::kFloat32; }
  float divisor = 0.0f;
  std::array<float, 4> floors = {-std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                                 -std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity()};
};

/// Whether a NaN or +inf score at a hidden key still reaches the softmax in
/// the subgraph a fused op replaces, by what hides the key. A mask added to
/// the scores keeps it (NaN + -inf is NaN, +inf + -inf is NaN, so the row is
/// NaN); Where(mask, scores, fill) replaces it by the fill. ONNX Attention
/// adds its causal mask and its attn_mask, so it keeps both.
struct HiddenNonFinite {
  bool structural = true;  // keys the causal or window part hides
  bool bias = true;        // keys a -inf bias entry or kv_valid_len hides (attn_mask, key padding)
};

/// Q·K as the subgraph's MatMul gives it: accumulated here in double, but
/// infinite (or NaN) where the product overflows the scores' type as the
/// float32 MatMul computes it (a fused multiply-add per term, in order, so a
/// running sum that passes FLT_MAX is ±inf and +inf meeting -inf is NaN even
/// where the exact dot product is finite), or reaches `limit`
/// (AttentionArgs::score_limit for float16 scores), as it does in the graph
/// before any scale. The reference backend and the non-finite rules read
/// scores through this.
inline double Float32Dot(const float* q, const float* k, int64_t n,
                         double limit = std::numeric_limits<double>::infinity()) {
  double dot = 0.0;
  float running = 0.0f;
  for (int64_t d = 0; d < n; ++d) {
    dot += static_cast<double>(q[d]) * k[d];
    running = std::fma(q[d], k[d], running);
  }
  if (!std::isfinite(running)) return running;
  if (dot > std::numeric_limits<float>::max() || dot >= limit) return std::numeric_limits<double>::infinity();
  if (dot < -std::numeric_limits<float>::max() || dot <= -limit) return -std::numeric_limits<double>::infinity();
  return dot;
}

struct AttentionArgs;

/// Row i's 16-bit score for key j as the subgraph's float16 or bfloat16
/// MatMul and scale step give it (HiddenFills::rounding): q·k accumulated in
/// float32 key by key, as Attune's 16-bit MatMul does, rounded to the type,
/// then scaled and rounded again.
float HalfScore(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, int64_t j);

struct AttentionArgs {
  int64_t batch = 0;
  int64_t q_heads = 0;
  int64_t kv_heads = 0;  // divides q_heads; query head h reads kv head h / (q_heads / kv_heads)
  int64_t q_len = 0;
  int64_t kv_len = 0;
  int64_t head_dim = 0;    // of Q and K
  int64_t v_head_dim = 0;  // of V and Y

  StridedView q;  // [batch][q_heads][q_len][head_dim]
  StridedView k;  // [batch][kv_heads][kv_len][head_dim]
  StridedView v;  // [batch][kv_heads][kv_len][v_head_dim]
  float* y = nullptr;  // [batch][q_heads][q_len][v_head_dim] with the strides below
  int64_t y_stride_batch = 0;
  int64_t y_stride_head = 0;
  int64_t y_stride_seq = 0;

  float scale = 1.0f;  // multiplies Q·Kᵀ
  /// When > 0, scores become softcap * tanh(scores / softcap) after the
  /// bias is added (ONNX Attention's order).
  float softcap = 0.0f;

  /// Causal: key j is visible to query i only if j <= i + causal_offset.
  /// Bottom-right alignment (a KV cache of length P before T new queries)
  /// uses causal_offset = kv_len - q_len.
  bool causal = false;
  int64_t causal_offset = 0;
  /// When > 0, key j is also hidden if j <= i + causal_offset - window:
  /// a query sees itself and the window - 1 keys before it.
  int64_t window = 0;

  /// Optional additive bias (mask) [batch][q_heads][q_len][kv_len], last dim
  /// contiguous, strides 0 to broadcast; -inf hides a key. Finite entries
  /// are added as they are, however large (finfo.min never becomes -inf).
  StridedView bias;
  /// Optional per-batch count of valid keys (keys j >= kv_valid_len[b] hidden).
  const int64_t* kv_valid_len = nullptr;
  /// Optional key padding [batch][kv_len], 1 where the key may be seen. The
  /// kernels read it through the bias (-inf where 0) and kv_valid_len (the
  /// trailing padding); it is here so that a fully hidden row can tell which
  /// part hides each key (MaskedRows::kFills).
  const uint8_t* key_visible = nullptr;
  HiddenFills hidden_fills;
  /// The bias is a position bias the subgraph adds to its scores before its
  /// masks hide keys (MultiHeadAttention's position_bias): a -inf entry at a
  /// key no mask hides is a -inf score, so a row whose every visible key has
  /// one takes the weights of the keys hidden from it (masked_rows), as a -inf
  /// Q or K entry does. The kernels read the bias as they read any bias; only
  /// the non-finite rules tell the two apart. Key padding, when given, is
  /// folded into the bias as -inf (the padded keys are key_visible's zeros).
  bool bias_is_scores = false;
  /// With bias_is_scores: the position bias as given, before the key padding
  /// was folded into `bias` (the non-finite rules read what it holds at
  /// padded keys; the kernels never read it).
  StridedView scores_bias;
  /// With bias_is_scores: scores + (bias + mask) (T5) rather than (scores + bias) + mask.
  bool bias_into_mask = false;

  /// A query row that sees no key at all outputs this.
  MaskedRows masked_rows = MaskedRows::kZeros;
  HiddenNonFinite hidden_nonfinite;
  /// Every K (V) entry is known finite, so the non-finite rules skip reading them.
  bool k_finite = false;
  bool v_finite = false;
  /// The subgraph guards its probabilities with Where(IsNaN(p), 0, p): a row
  /// that a NaN or +inf score makes NaN gives all-zero weights instead.
  bool nan_rows_zeroed = false;
  /// |Q·K| (before the scale) at and above which the subgraph's score is
  /// ±inf: 65520 (over the factors applied before its MatMul) for float16
  /// scores, which overflow where the float32 the kernels compute in does
  /// not. The non-finite rules recompute the rows that may reach it.
  float score_limit = std::numeric_limits<float>::infinity();
  /// Optional [q_heads]: a learned logit per query head (an attention sink)
  /// that joins every row's softmax denominator and weights no value:
  /// Y = sum_j e^{s_j} v_j / (sum_j e^{s_j} + e^{sink}).
  const float* sinks = nullptr;
  int threads = 1;
};

/// Checks the dimensions and pointers (kv_heads divides q_heads, sizes >= 0,
/// data present); InvalidArgument with the reason otherwise.
absl::Status ValidateAttentionArgs(const AttentionArgs& args);

/// Runs attention with the requested backend (kAuto chooses by shape and CPU).
absl::Status RunAttention(const AttentionArgs& args, AttentionBackend backend);

}  // namespace attune::attention
