// The flash attention tile loop, written once over a SIMD traits type V and
// instantiated by each ISA translation unit (flash_attention_<isa>.cc). Every
// function here is a template of V, and each V lives in an anonymous
// namespace, so instantiations never collide across ISA objects.
//
// V provides: F (a vector of kLanes floats), Zero, Set1, Load, Store, Add,
// Sub, Mul, Div, Fma(a, b, c) = a*b + c, Max, Exp2 (x <= 0 domain, lower
// clamp), Exp2Clamped, MaskRange(s, lo, hi, j) (-inf in lanes whose
// [lo, hi) does not contain j), AnyDifferent, ZeroIfNegInf, KeepNegInf(x, r),
// PrefetchL2(p) (a hint; may do nothing).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ops/attention/kernels/attention_mask.h"
#include "ops/attention/kernels/flash_attention.h"

namespace attune::attention::flash_detail {

inline constexpr float kLog2e = 1.44269504088896340736f;
inline constexpr float kLn2 = 0.69314718055994530942f;
inline constexpr float kNegInf = -std::numeric_limits<float>::infinity();
/// block_q is at most this (stack arrays of per-row pointers).
inline constexpr int kMaxBlockQ = 128;

/// C[MR][NV·L] (+)= Σ_k A(m, k) · B[k][0 : NV·L].
/// kARowMajor: A(m, k) = a[m * a_stride + k] (K rows in Q·Kᵀ), else
/// A(m, k) = a[k * a_stride + m] (V rows in P·V).
/// Epilogue: kMask hides keys outside each query lane's [lo, hi) (row m is
/// key row0 + m), kMax folds the tile into tile_max.
template <class V, int MR, int NV, bool kARowMajor, bool kMask, bool kMax>
inline void MicroGemm(const float* a, int64_t a_stride, const float* b, int64_t ldb, int64_t kdim, float* c,
                      int64_t ldc, bool accumulate, const int32_t* lo, const int32_t* hi, int32_t row0,
                      float* tile_max) {
  using F = typename V::F;
  constexpr int L = V::kLanes;
  F acc[MR][NV];
  if (accumulate) {
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[m][v] = V::Load(c + m * ldc + v * L);
  } else {
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[m][v] = V::Zero();
  }
  if constexpr (kARowMajor) {
    const float* ar[MR];
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m) ar[m] = a + m * a_stride;
    for (int64_t k = 0; k < kdim; ++k) {
      F bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = V::Load(b + k * ldb + v * L);
#pragma GCC unroll 16
      for (int m = 0; m < MR; ++m) {
        const F x = V::Set1(ar[m][k]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[m][v] = V::Fma(x, bv[v], acc[m][v]);
      }
    }
  } else {
    for (int64_t k = 0; k < kdim; ++k) {
      const float* ak = a + k * a_stride;
      F bv[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) bv[v] = V::Load(b + k * ldb + v * L);
#pragma GCC unroll 16
      for (int m = 0; m < MR; ++m) {
        const F x = V::Set1(ak[m]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[m][v] = V::Fma(x, bv[v], acc[m][v]);
      }
    }
  }
  if constexpr (kMask) {
#pragma GCC unroll 16
    for (int m = 0; m < MR; ++m)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[m][v] = V::MaskRange(acc[m][v], lo + v * L, hi + v * L, row0 + m);
  }
  if constexpr (kMax) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      F mx = V::Load(tile_max + v * L);
#pragma GCC unroll 16
      for (int m = 0; m < MR; ++m) mx = V::Max(mx, acc[m][v]);
      V::Store(tile_max + v * L, mx);
    }
  }
#pragma GCC unroll 16
  for (int m = 0; m < MR; ++m)
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) V::Store(c + m * ldc + v * L, acc[m][v]);
}

/// MicroGemm with a run-time row count 1..MR (tails).
template <class V, int MR, int NV, bool kARowMajor, bool kMask, bool kMax>
inline void MicroGemmRows(int rows, const float* a, int64_t a_stride, const float* b, int64_t ldb, int64_t kdim,
                          float* c, int64_t ldc, bool accumulate, const int32_t* lo, const int32_t* hi, int32_t row0,
                          float* tile_max) {
  if (rows == MR) {
    MicroGemm<V, MR, NV, kARowMajor, kMask, kMax>(a, a_stride, b, ldb, kdim, c, ldc, accumulate, lo, hi, row0,
                                                   tile_max);
  } else if constexpr (MR > 1) {
    MicroGemmRows<V, MR - 1, NV, kARowMajor, kMask, kMax>(rows, a, a_stride, b, ldb, kdim, c, ldc, accumulate, lo, hi,
                                                           row0, tile_max);
  }
}

/// Everything one task needs, resolved once.
struct BlockContext {
  const AttentionArgs* args;
  const FlashPlan* plan;
  int64_t batch, head, kv_head, q_begin, rows;
  int64_t bq;  // padded block width (ld of Qᵀ, St, Ot)
  float* qt;
  float* st;
  float* ot;
  float* max;
  float* sum;
  float* tile_max;
  int32_t* lo;
  int32_t* hi;
  /// Per sub-chunk of kSubChunk query lanes: the keys any of its rows sees
  /// (sub_end <= sub_begin when none).
  int64_t sub_begin[kMaxBlockQ / 16];
  int64_t sub_end[kMaxBlockQ / 16];
};

/// Query lanes of the narrow sub-chunks used on partially masked tiles.
inline constexpr int64_t kSubChunk = 16;

/// Prefetches `rows` rows of `floats` floats into L2.
template <class V>
inline void PrefetchRows(const float* p, int64_t stride, int64_t rows, int64_t floats) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t f = 0; f < floats; f += 16) V::PrefetchL2(p + r * stride + f);
}

/// Q·Kᵀ of the unmasked tile [j0, j0 + nk) into St with our micro-kernels;
/// when fuse_max, the epilogue folds the tile max.
/// K and V rows are strided rows of the caller's tensors (3 KB apart for
/// B,T,H·D with 12 heads), which the hardware prefetchers do not follow
/// across pages: the first chunk's group loop prefetches this tile's V rows
/// (for P·V) and the next tile's K rows into L2 (measured at T=2048, AVX-512, 1 thread: ~100 -> ~125 GFLOP/s per CPU-second).
template <class V, int MR, int NV>
void TileScoresNative(const BlockContext& ctx, int64_t j0, int64_t nk, int64_t next_nk, bool fuse_max) {
  constexpr int64_t NQ = NV * V::kLanes;
  const AttentionArgs& a = *ctx.args;
  const float* k0 = RowOf(a.k, ctx.batch, ctx.kv_head, j0);
  const float* v0 = RowOf(a.v, ctx.batch, ctx.kv_head, j0);
  const float* k_next = k0 + nk * a.k.stride_seq;
  for (int64_t c = 0; c < ctx.bq; c += NQ) {
    for (int64_t g = 0; g < nk; g += MR) {
      const int rows = static_cast<int>(std::min<int64_t>(MR, nk - g));
      if (c == 0) {
        PrefetchRows<V>(v0 + g * a.v.stride_seq, a.v.stride_seq, rows, a.v_head_dim);
        if (g < next_nk) {
          PrefetchRows<V>(k_next + g * a.k.stride_seq, a.k.stride_seq, std::min<int64_t>(rows, next_nk - g),
                          a.head_dim);
        }
      }
      const float* kg = k0 + g * a.k.stride_seq;
      float* out = ctx.st + g * ctx.bq + c;
      const int32_t row0 = static_cast<int32_t>(j0 + g);
      if (fuse_max) {
        MicroGemmRows<V, MR, NV, true, false, true>(rows, kg, a.k.stride_seq, ctx.qt + c, ctx.bq, a.head_dim, out,
                                                    ctx.bq, false, nullptr, nullptr, row0, ctx.tile_max + c);
      } else {
        MicroGemmRows<V, MR, NV, true, false, false>(rows, kg, a.k.stride_seq, ctx.qt + c, ctx.bq, a.head_dim, out,
                                                     ctx.bq, false, nullptr, nullptr, row0, nullptr);
      }
    }
  }
}

/// Ot += Vᵀ · Pᵀ for keys [j0, j0 + nk) with our micro-kernels.
template <class V, int MR, int NV>
void TileOutputNative(const BlockContext& ctx, int64_t j0, int64_t nk) {
  constexpr int64_t NQ = NV * V::kLanes;
  const AttentionArgs& a = *ctx.args;
  const float* v0 = RowOf(a.v, ctx.batch, ctx.kv_head, j0);
  for (int64_t c = 0; c < ctx.bq; c += NQ) {
    for (int64_t d = 0; d < a.v_head_dim; d += MR) {
      const int rows = static_cast<int>(std::min<int64_t>(MR, a.v_head_dim - d));
      MicroGemmRows<V, MR, NV, false, false, false>(rows, v0 + d, a.v.stride_seq, ctx.st + c, ctx.bq, nk,
                                                    ctx.ot + d * ctx.bq + c, ctx.bq, true, nullptr, nullptr, 0,
                                                    nullptr);
    }
  }
}

/// The keys [from, to) of tile [j0, j0 + nk) that sub-chunk s can see.
inline void SubChunkKeys(const BlockContext& ctx, int64_t s, int64_t j0, int64_t nk, int64_t* from, int64_t* to) {
  *from = std::clamp<int64_t>(ctx.sub_begin[s] - j0, 0, nk);
  *to = std::clamp<int64_t>(ctx.sub_end[s] - j0, 0, nk);
  if (*to <= *from) *from = *to = 0;
}

/// Q·Kᵀ of a partially masked tile (the causal diagonal, window edges): per
/// narrow sub-chunk of 16 query lanes, only the keys one of its rows sees
/// are computed (SMR x SNV·L micro-kernel, masked epilogue); the rest of St
/// is -inf. Against the full-width kernel this skips most of the masked
/// triangle (about 64·64/2 of every diagonal 64 x 64 block).
template <class V, int SMR, int SNV>
void TileScoresPartial(const BlockContext& ctx, int64_t j0, int64_t nk, int64_t next_nk, bool fuse_max) {
  constexpr int64_t SQ = SNV * V::kLanes;
  static_assert(SQ == kSubChunk);
  const AttentionArgs& a = *ctx.args;
  const float* k0 = RowOf(a.k, ctx.batch, ctx.kv_head, j0);
  PrefetchRows<V>(RowOf(a.v, ctx.batch, ctx.kv_head, j0), a.v.stride_seq, nk, a.v_head_dim);
  PrefetchRows<V>(k0 + nk * a.k.stride_seq, a.k.stride_seq, next_nk, a.head_dim);
  const typename V::F hidden = V::Set1(kNegInf);
  for (int64_t c = 0; c < ctx.bq; c += SQ) {
    int64_t from, to;
    SubChunkKeys(ctx, c / SQ, j0, nk, &from, &to);
    for (int64_t j = 0; j < from; ++j)
      for (int64_t v = 0; v < SQ; v += V::kLanes) V::Store(ctx.st + j * ctx.bq + c + v, hidden);
    for (int64_t g = from; g < to; g += SMR) {
      const int rows = static_cast<int>(std::min<int64_t>(SMR, to - g));
      const float* kg = k0 + g * a.k.stride_seq;
      float* out = ctx.st + g * ctx.bq + c;
      const int32_t row0 = static_cast<int32_t>(j0 + g);
      if (fuse_max) {
        MicroGemmRows<V, SMR, SNV, true, true, true>(rows, kg, a.k.stride_seq, ctx.qt + c, ctx.bq, a.head_dim, out,
                                                     ctx.bq, false, ctx.lo + c, ctx.hi + c, row0, ctx.tile_max + c);
      } else {
        MicroGemmRows<V, SMR, SNV, true, true, false>(rows, kg, a.k.stride_seq, ctx.qt + c, ctx.bq, a.head_dim, out,
                                                      ctx.bq, false, ctx.lo + c, ctx.hi + c, row0, ctx.tile_max + c);
      }
    }
    for (int64_t j = to; j < nk; ++j)
      for (int64_t v = 0; v < SQ; v += V::kLanes) V::Store(ctx.st + j * ctx.bq + c + v, hidden);
  }
}

/// Ot += Vᵀ · Pᵀ of a partially masked tile, per sub-chunk over only the
/// keys it sees (P is exactly 0 elsewhere).
template <class V, int SMR, int SNV>
void TileOutputPartial(const BlockContext& ctx, int64_t j0, int64_t nk) {
  constexpr int64_t SQ = SNV * V::kLanes;
  const AttentionArgs& a = *ctx.args;
  for (int64_t c = 0; c < ctx.bq; c += SQ) {
    int64_t from, to;
    SubChunkKeys(ctx, c / SQ, j0, nk, &from, &to);
    if (from >= to) continue;
    const float* v0 = RowOf(a.v, ctx.batch, ctx.kv_head, j0 + from);
    for (int64_t d = 0; d < a.v_head_dim; d += SMR) {
      const int rows = static_cast<int>(std::min<int64_t>(SMR, a.v_head_dim - d));
      MicroGemmRows<V, SMR, SNV, false, false, false>(rows, v0 + d, a.v.stride_seq, ctx.st + from * ctx.bq + c,
                                                      ctx.bq, to - from, ctx.ot + d * ctx.bq + c, ctx.bq, true,
                                                      nullptr, nullptr, 0, nullptr);
    }
  }
}

/// Bias, softcap and tile max over St, for what the Q·Kᵀ epilogue did not
/// do (it applies the mask). With a bias the scores leave this pass in natural units, S·ln2 +
/// bias, so that adding a large bias (-1e4, finfo.min) rounds exactly as the
/// subgraph's Add does; TileSoftmax<kNatural> then takes exp2((S - max)·log2e).
template <class V>
void TileScorePass(const BlockContext& ctx, int64_t j0, int64_t nk) {
  using F = typename V::F;
  constexpr int64_t L = V::kLanes;
  const AttentionArgs& a = *ctx.args;
  const bool natural = a.bias.data != nullptr;
  if (natural) {
    const float* brow[kMaxBlockQ];
    for (int64_t i = 0; i < ctx.rows; ++i) brow[i] = RowOf(a.bias, ctx.batch, ctx.head, ctx.q_begin + i) + j0;
    for (int64_t j = 0; j < nk; ++j) {
      float* s = ctx.st + j * ctx.bq;
      // A key the tile's mask hid (-inf) stays hidden whatever its bias
      // holds: a NaN or +inf bias there must not reach the row (the
      // subgraph's Where replaced that score; where it adds instead, the
      // non-finite rules make the row NaN afterwards).
      for (int64_t i = 0; i < ctx.rows; ++i) s[i] = s[i] == kNegInf ? kNegInf : s[i] * kLn2 + brow[i][j];
      for (int64_t i = ctx.rows; i < ctx.bq; ++i) s[i] *= kLn2;  // padding lanes: same units
    }
  }
  const bool softcap = a.softcap > 0.0f;
  const float cap = natural ? a.softcap : a.softcap * kLog2e;  // the cap in the scores' units
  const F inv_cap2 = V::Set1(2.0f / cap * kLog2e);
  const F one = V::Set1(1.0f), two = V::Set1(2.0f), capv = V::Set1(cap);
  for (int64_t j = 0; j < nk; ++j) {
    float* s = ctx.st + j * ctx.bq;
    for (int64_t c = 0; c < ctx.bq; c += L) {
      F x = V::Load(s + c);
      if (softcap) {
        // cap * tanh(x / cap), tanh(y) = 1 - 2 / (e^{2y} + 1); -inf stays -inf.
        const F e = V::Exp2Clamped(V::Mul(x, inv_cap2));
        const F t = V::Sub(one, V::Div(two, V::Add(e, one)));
        x = V::KeepNegInf(x, V::Mul(capv, t));
      }
      V::Store(ctx.tile_max + c, V::Max(V::Load(ctx.tile_max + c), x));
      V::Store(s + c, x);
    }
  }
}

/// Online softmax step after the tile max is known: new running max,
/// rescale of the sum and Ot where the max moved, P = exp2(S - max) in place
/// and its row sums. kNatural: S and max are in natural units (a bias was
/// added), P = exp2((S - max)·log2e); the difference is exact before the
/// multiply, so large biases cost no precision.
template <class V, int NV, bool kNatural>
void TileSoftmax(const BlockContext& ctx, int64_t nk, int64_t v_dim) {
  using F = typename V::F;
  constexpr int64_t L = V::kLanes;
  constexpr int64_t NQ = NV * L;
  const F log2e = V::Set1(kLog2e);
  auto exponent = [&](F d) { return kNatural ? V::Mul(d, log2e) : d; };
  for (int64_t c = 0; c < ctx.bq; c += L) {
    const F old_max = V::Load(ctx.max + c);
    const F new_max = V::Max(old_max, V::Load(ctx.tile_max + c));
    if (V::AnyDifferent(old_max, new_max)) {
      const F alpha = V::Exp2(exponent(V::Sub(old_max, V::ZeroIfNegInf(new_max))));
      V::Store(ctx.sum + c, V::Mul(V::Load(ctx.sum + c), alpha));
      for (int64_t d = 0; d < v_dim; ++d) {
        float* o = ctx.ot + d * ctx.bq + c;
        V::Store(o, V::Mul(V::Load(o), alpha));
      }
      V::Store(ctx.max + c, new_max);
    }
  }
  for (int64_t c = 0; c < ctx.bq; c += NQ) {
    F m[NV], sum[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      m[v] = V::ZeroIfNegInf(V::Load(ctx.max + c + v * L));
      sum[v] = V::Zero();
    }
    for (int64_t j = 0; j < nk; ++j) {
      float* s = ctx.st + j * ctx.bq + c;
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        const F p = V::Exp2(exponent(V::Sub(V::Load(s + v * L), m[v])));
        V::Store(s + v * L, p);
        sum[v] = V::Add(sum[v], p);
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) V::Store(ctx.sum + c + v * L, V::Add(V::Load(ctx.sum + c + v * L), sum[v]));
  }
}

/// One task: a block of query rows of one (batch, head), over every key tile
/// any of its rows can see. MR x NV·L is the micro-kernel's register tile on
/// unmasked tiles, SMR x SNV·L (16 query lanes) on partially masked ones.
template <class V, int MR, int NV, int SMR, int SNV>
void ProcessQueryBlock(const AttentionArgs& a, const FlashPlan& plan, const FlashTask& task, float* scratch) {
  using F = typename V::F;
  constexpr int64_t L = V::kLanes;
  BlockContext ctx;
  ctx.args = &a;
  ctx.plan = &plan;
  ctx.batch = task.batch;
  ctx.head = task.head;
  ctx.kv_head = KvHeadOf(a, task.head);
  ctx.q_begin = task.q_begin;
  ctx.rows = task.q_end - task.q_begin;
  ctx.bq = plan.block_q;
  ctx.qt = scratch + plan.qt_offset;
  ctx.st = scratch + plan.st_offset;
  ctx.ot = scratch + plan.ot_offset;
  ctx.max = scratch + plan.max_offset;
  ctx.sum = scratch + plan.sum_offset;
  ctx.tile_max = scratch + plan.tile_max_offset;
  ctx.lo = reinterpret_cast<int32_t*>(scratch + plan.lo_offset);
  ctx.hi = reinterpret_cast<int32_t*>(scratch + plan.hi_offset);
  const int64_t bq = ctx.bq, rows = ctx.rows, dim = a.head_dim, v_dim = a.v_head_dim;

  // Scaled Qᵀ (padding lanes 0) and each row's visible key range.
  std::memset(ctx.qt, 0, sizeof(float) * dim * bq);
  int64_t k_first = a.kv_len, k_last = 0;
  constexpr int64_t kPrefetchAhead = 8;  // Q rows are strided: fetch ahead of the transposition
  for (int64_t i = 0; i < std::min(rows, kPrefetchAhead); ++i) {
    PrefetchRows<V>(RowOf(a.q, ctx.batch, ctx.head, ctx.q_begin + i), 0, 1, dim);
  }
  for (int64_t i = 0; i < bq; ++i) {
    ctx.lo[i] = ctx.hi[i] = 0;
    if (i >= rows) continue;
    if (i + kPrefetchAhead < rows) {
      PrefetchRows<V>(RowOf(a.q, ctx.batch, ctx.head, ctx.q_begin + i + kPrefetchAhead), 0, 1, dim);
    }
    const float* q = RowOf(a.q, ctx.batch, ctx.head, ctx.q_begin + i);
    for (int64_t d = 0; d < dim; ++d) ctx.qt[d * bq + i] = q[d] * plan.log2_scale;
    const KeyRange keys = VisibleKeys(a, ctx.batch, ctx.q_begin + i);
    if (keys.empty()) continue;
    ctx.lo[i] = static_cast<int32_t>(keys.begin);
    ctx.hi[i] = static_cast<int32_t>(keys.end);
    k_first = std::min(k_first, keys.begin);
    k_last = std::max(k_last, keys.end);
  }
  for (int64_t c = 0; c < bq; c += kSubChunk) {
    int64_t begin = a.kv_len, end = 0;
    for (int64_t i = c; i < std::min(c + kSubChunk, rows); ++i) {
      if (ctx.hi[i] <= ctx.lo[i]) continue;
      begin = std::min<int64_t>(begin, ctx.lo[i]);
      end = std::max<int64_t>(end, ctx.hi[i]);
    }
    ctx.sub_begin[c / kSubChunk] = begin;
    ctx.sub_end[c / kSubChunk] = end;
  }
  for (int64_t i = 0; i < bq; i += L) {
    V::Store(ctx.max + i, V::Set1(kNegInf));
    V::Store(ctx.sum + i, V::Zero());
  }
  std::memset(ctx.ot, 0, sizeof(float) * v_dim * bq);

  const bool score_pass = a.bias.data != nullptr || a.softcap > 0.0f;
  for (int64_t j0 = k_first; j0 < k_last; j0 += plan.block_k) {
    const int64_t nk = std::min(plan.block_k, k_last - j0);
    bool full = true;  // every row sees every key of the tile: no masking
    for (int64_t i = 0; i < rows && full; ++i) full = ctx.lo[i] <= j0 && ctx.hi[i] >= j0 + nk;
    for (int64_t i = 0; i < bq; i += L) V::Store(ctx.tile_max + i, V::Set1(kNegInf));

    const int64_t next_nk = std::max<int64_t>(0, std::min(plan.block_k, k_last - j0 - nk));
    if (full) {
      TileScoresNative<V, MR, NV>(ctx, j0, nk, next_nk, !score_pass);
    } else {
      TileScoresPartial<V, SMR, SNV>(ctx, j0, nk, next_nk, !score_pass);
    }
    if (score_pass) TileScorePass<V>(ctx, j0, nk);
    if (a.bias.data != nullptr) {
      TileSoftmax<V, NV, true>(ctx, nk, v_dim);
    } else {
      TileSoftmax<V, NV, false>(ctx, nk, v_dim);
    }
    if (full) {
      TileOutputNative<V, MR, NV>(ctx, j0, nk);
    } else {
      TileOutputPartial<V, SMR, SNV>(ctx, j0, nk);
    }
  }

  for (int64_t i = 0; i < rows; ++i) {
    const float l = ctx.sum[i];
    if (!(l > 0.0f)) {  // no visible key
      WriteMaskedRow(a, ctx.batch, ctx.head, ctx.q_begin + i);
      continue;
    }
    // Scores and max are in log2 units, or natural ones with a bias.
    const bool natural = a.bias.data != nullptr;
    const float inv = a.sinks == nullptr ? 1.0f / l
                                         : SinkNormalizer(a, ctx.head, natural ? 1.0f : kLog2e,
                                                          natural ? kLog2e : 1.0f, ctx.max[i], l);
    float* y = OutputRow(a, ctx.batch, ctx.head, ctx.q_begin + i);
    for (int64_t d = 0; d < v_dim; ++d) y[d] = ctx.ot[d * bq + i] * inv;
  }
  (void)sizeof(F);
}

}  // namespace attune::attention::flash_detail
