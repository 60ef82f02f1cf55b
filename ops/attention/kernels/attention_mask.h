// Which keys a query row may see, from the structural masks of AttentionArgs
// (kv_valid_len, causal with offset, window). Every implementation uses this
// one definition so they agree on the edges; the bias is applied separately.
#pragma once

#include <algorithm>
#include <cstdint>

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

}  // namespace

/// Team size for OpenMP regions: `threads` <= 0 means "whatever OpenMP
/// would use", as ExecOptions::threads does.
int TeamSize(const AttentionArgs& a);

}  // namespace attune::attention
