// Which keys a query row may see, from the structural masks of AttentionArgs
// (kv_valid_len, causal with offset, window). Every implementation uses this
// one definition so they agree on the edges; the bias is applied separately.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "core/ir/round_through_type.h"
#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

// Internal linkage on purpose: these helpers are compiled into the per-ISA
// translation units too, and an inline function compiled with -mavx512f must
// never be the copy the linker picks for a generic caller.
namespace {

/// Keys [begin, end) are structurally visible; empty when end <= begin.
struct KeyRange {
  int64_t begin = 0;
  int64_t end = 0;
  bool empty() const { return end <= begin; }
};

/// Number of keys batch `b` holds (kv_valid_len clamped to [0, kv_len]).
inline int64_t ValidKeys(const AttentionArgs& a, int64_t b) {
  if (a.kv_valid_len == nullptr) return a.kv_len;
  return std::clamp<int64_t>(a.kv_valid_len[b], 0, a.kv_len);
}

/// The keys query row `i` of batch `b` may see. The window applies whether
/// or not `causal` is set (it only bounds keys from the left).
inline KeyRange VisibleKeys(const AttentionArgs& a, int64_t b, int64_t i) {
  KeyRange r{0, ValidKeys(a, b)};
  if (a.causal) r.end = std::min(r.end, i + a.causal_offset + 1);
  if (a.window > 0) r.begin = std::max<int64_t>(0, i + a.causal_offset - a.window + 1);
  if (r.end < r.begin) r.end = r.begin;
  return r;
}

/// Pointer helpers for the strided views.
inline const float* RowOf(const StridedView& v, int64_t b, int64_t h, int64_t t) {
  return v.data + b * v.stride_batch + h * v.stride_head + t * v.stride_seq;
}
inline float* OutputRow(const AttentionArgs& a, int64_t b, int64_t h, int64_t i) {
  return a.y + b * a.y_stride_batch + h * a.y_stride_head + i * a.y_stride_seq;
}
/// The kv head query head `h` reads (GQA: consecutive query heads share one).
inline int64_t KvHeadOf(const AttentionArgs& a, int64_t h) { return h / (a.q_heads / a.kv_heads); }

/// Whether the causal and window parts alone hide key j from query row i.
inline bool StructurallyHidden(const AttentionArgs& a, int64_t i, int64_t j) {
  if (a.causal && j > i + a.causal_offset) return true;
  return a.window > 0 && j <= i + a.causal_offset - a.window;
}

/// Query row i's score for key j as the subgraph's float32 MatMul and scale give it.
inline float ScaledScore(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, int64_t j) {
  const double dot = Float32Dot(RowOf(a.q, b, h, i), RowOf(a.k, b, KvHeadOf(a, h), j), a.head_dim);
  return static_cast<float>(static_cast<float>(dot) * a.scale);
}

/// Query head h's sink logit, -inf when the op has none (it then weighs nothing).
inline float SinkOf(const AttentionArgs& a, int64_t h) {
  return a.sinks != nullptr ? a.sinks[h] : -std::numeric_limits<float>::infinity();
}

/// The factor that turns a row's accumulator into its output once the sink
/// joins the denominator: the row's keys have running max `m` (finite) and
/// sum `l` > 0 with weights exp2((x - m)·unit); the sink (natural units) is
/// converted to the scores' units (`to_units`: log2 e for scores in log2
/// units, 1 for natural ones). The max takes the sink in first, so neither
/// exponent is positive and nothing overflows. A NaN or +inf sink makes the
/// row NaN, as the subgraph's softmax over a row holding it does.
inline float SinkNormalizer(const AttentionArgs& a, int64_t h, float to_units, float unit, float m, float l) {
  const float sink_logit = SinkOf(a, h);
  if (sink_logit == -std::numeric_limits<float>::infinity()) return 1.0f / l;
  if (!(sink_logit < std::numeric_limits<float>::infinity())) return std::numeric_limits<float>::quiet_NaN();
  const float sink = sink_logit * to_units;
  const float top = std::max(m, sink);
  const float alpha = std::exp2((m - top) * unit);
  return alpha / (l * alpha + std::exp2((sink - top) * unit));
}

/// The weight of each key in a query row that sees no key, as a.masked_rows
/// says: what the replaced subgraph's softmax gives there (NaN for a row of
/// -inf scores, 1/kv_len for equal finite fills, zeros for ONNX Attention).
/// With kFills the weights are the softmax, in double, of each key's fill
/// (of the key's scaled score plus the fill, where that part adds to it).
/// `neg_inf` (optional, [kv_len]) marks keys the row does see but whose
/// score is -inf (from an infinite Q or K entry): they get weight 0, and the
/// row takes the weights of the keys hidden from it.
inline void MaskedRowWeights(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, double* w,
                             const std::vector<bool>* neg_inf = nullptr) {
  auto seen = [&](int64_t j) { return neg_inf != nullptr && (*neg_inf)[j]; };
  switch (a.kv_len == 0 ? MaskedRows::kZeros : a.masked_rows) {
    case MaskedRows::kZeros: std::fill(w, w + a.kv_len, 0.0); return;
    case MaskedRows::kNaN: {
      // A row of -inf scores: a finite sink takes every weight (the keys get
      // 0); without one (or a -inf, NaN or +inf sink) the softmax is NaN.
      const float sink = SinkOf(a, h);
      std::fill(w, w + a.kv_len, std::isfinite(sink) ? 0.0 : std::numeric_limits<double>::quiet_NaN());
      return;
    }
    case MaskedRows::kUniform: {
      int64_t hidden = 0;
      for (int64_t j = 0; j < a.kv_len; ++j) hidden += !seen(j);
      for (int64_t j = 0; j < a.kv_len; ++j)
        w[j] = hidden == 0 ? std::numeric_limits<double>::quiet_NaN() : seen(j) ? 0.0 : 1.0 / static_cast<double>(hidden);
      return;
    }
    case MaskedRows::kFills: {
      const uint8_t* visible = a.key_visible != nullptr ? a.key_visible + b * a.kv_len : nullptr;
      double top = -std::numeric_limits<double>::infinity();
      for (int64_t j = 0; j < a.kv_len; ++j) {
        const bool padded = visible != nullptr && visible[j] == 0;
        const bool structural = StructurallyHidden(a, i, j);
        // A key neither part hides is hidden by a key beyond kv_valid_len, which only padding sets.
        const HiddenFills& f = a.hidden_fills;
        const float fill = seen(j)                ? -std::numeric_limits<float>::infinity()
                           : structural && padded ? f.both
                           : structural           ? f.causal
                                                  : f.padding;
        const bool adds = !seen(j) && (structural && padded ? f.both_adds_score
                                       : structural         ? f.causal_adds_score
                                                            : f.padding_adds_score);
        if (f.half()) {
          // The subgraph's 16-bit steps: Q·K, the scale, plus the fill, each
          // rounded to the type, then the clamp; a visible key whose score
          // overflowed to -inf gets its clamp too.
          const int part = seen(j) ? 0 : structural && padded ? 3 : structural ? 1 : 2;
          const float masked = seen(j) ? -std::numeric_limits<float>::infinity()
                               : adds  ? RoundThroughType(f.rounding, HalfScore(a, b, h, i, j) + fill)
                                       : fill;
          w[j] = std::max(masked, f.floors[part]);
        } else {
          // The subgraph's float32 steps: Q·K, times the scale, plus the fill.
          w[j] = adds ? static_cast<float>(ScaledScore(a, b, h, i, j) + fill) : fill;
        }
        top = std::max(top, w[j]);
      }
      // The sink is one more score of the row's softmax, weighting no value.
      const double sink = SinkOf(a, h);
      if (std::isnan(sink) || sink == std::numeric_limits<double>::infinity()) top = sink;
      top = std::max(top, sink);
      if (top == -std::numeric_limits<double>::infinity() || std::isnan(top)) {  // softmax of -inf everywhere
        std::fill(w, w + a.kv_len, std::numeric_limits<double>::quiet_NaN());
        return;
      }
      // The fills are float32 scores: exp of their difference, as the
      // subgraph's softmax takes it, and 0 where the difference overflows.
      double sum = std::exp(static_cast<double>(static_cast<float>(sink - top)));
      for (int64_t j = 0; j < a.kv_len; ++j) {
        w[j] = std::exp(static_cast<double>(static_cast<float>(w[j] - top)));
        sum += w[j];
      }
      for (int64_t j = 0; j < a.kv_len; ++j) w[j] /= sum;
      return;
    }
  }
}

/// Writes output row (b, h, i) of a query that sees no key, as
/// a.masked_rows says (MaskedRowWeights, accumulated in double). Without any
/// key at all (kv_len 0) the row is zeros whatever the policy: the
/// subgraph's P·V then sums over nothing.
inline void WriteMaskedRow(const AttentionArgs& a, int64_t b, int64_t h, int64_t i,
                           const std::vector<bool>* neg_inf = nullptr) {
  float* y = OutputRow(a, b, h, i);
  if (a.kv_len == 0 || a.masked_rows == MaskedRows::kZeros) {
    std::fill(y, y + a.v_head_dim, 0.0f);
    return;
  }
  if (a.masked_rows == MaskedRows::kNaN) {
    // With a finite sink the sink takes every weight: zeros.
    const float fill = std::isfinite(SinkOf(a, h)) ? 0.0f : std::numeric_limits<float>::quiet_NaN();
    std::fill(y, y + a.v_head_dim, fill);
    return;
  }
  std::vector<double> w(static_cast<size_t>(a.kv_len));
  MaskedRowWeights(a, b, h, i, w.data(), neg_inf);
  const int64_t kvh = KvHeadOf(a, h);
  for (int64_t d = 0; d < a.v_head_dim; ++d) {
    double sum = 0.0;
    for (int64_t j = 0; j < a.kv_len; ++j)
      if (w[j] != 0.0) sum += w[j] * RowOf(a.v, b, kvh, j)[d];
    y[d] = static_cast<float>(sum);
  }
}

}  // namespace

/// Team size for OpenMP regions: `threads` <= 0 means "whatever OpenMP
/// would use", as ExecOptions::threads does.
int TeamSize(const AttentionArgs& a);

}  // namespace attune::attention
