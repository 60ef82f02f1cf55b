#include "ops/attention/kernels/attention_onednn.h"

#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "dnnl.hpp"
#include "ops/attention/kernels/attention_mask.h"
#include "ops/common/lru_cache.h"
#include "ops/attention/kernels/scratch_buffer.h"

namespace attune::attention {
namespace {

using dnnl::memory;
using Dims = memory::dims;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();
/// Largest scores buffer this path materialises (the flash path needs none).
constexpr int64_t kMaxScoresBytes = int64_t{2} << 30;
/// Primitive sets kept (least recently used out).
constexpr size_t kMaxCachedShapes = 64;

dnnl::engine& Engine() {
  static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

/// oneDNN sizes its OpenMP team from omp_get_max_threads(); this sets it
/// for the calling thread only and restores it.
class ScopedOmpThreads {
 public:
  explicit ScopedOmpThreads(int n) : saved_(omp_get_max_threads()) { omp_set_num_threads(n); }
  ~ScopedOmpThreads() { omp_set_num_threads(saved_); }

 private:
  int saved_;
};

/// Which dims of the additive mask vary (the others are broadcast, size 1).
/// oneDNN 2.6 only keeps its brgemm/jit matmul for a binary post-op whose
/// batch dim is not broadcast when batch > 1, so the batch dim always varies.
struct MaskShape {
  bool present = false;
  bool heads = false, rows = false;
};

MaskShape MaskShapeOf(const AttentionArgs& a) {
  MaskShape m;
  const bool bias = a.bias.data != nullptr;
  m.present = bias || a.causal || a.window > 0 || a.kv_valid_len != nullptr;
  m.heads = a.q_heads > 1 && bias && a.bias.stride_head != 0;
  m.rows = a.q_len > 1 && ((bias && a.bias.stride_seq != 0) || a.causal || a.window > 0);
  return m;
}

memory::desc Strided4d(int64_t d0, int64_t d1, int64_t d2, int64_t d3, int64_t s0, int64_t s1, int64_t s2,
                       int64_t s3) {
  Dims dims{d0, d1, d2, d3}, strides{s0, s1, s2, s3};
  // Broadcast inputs (stride 0) become size-1 dims.
  for (size_t i = 0; i < 2; ++i) {
    if (strides[i] == 0) {
      dims[i] = 1;
      strides[i] = 1;
    }
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

memory::desc Dense4d(int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  return memory::desc({d0, d1, d2, d3}, memory::data_type::f32, memory::format_tag::abcd);
}

// GQA: the G query heads sharing a kv head are run as G executions of 4-D
// [B, Hkv, T, D] primitives over views offset by g heads (a 5-D grouped
// matmul with broadcast falls back to oneDNN's reference code). Scores,
// probabilities and the mask are laid out [G][B][Hkv][Tq][Tk], dense per g.
struct Primitives {
  memory::desc q, kt, v, y, scores, mask, softmax_rows;
  dnnl::matmul qk, pv;
  dnnl::softmax_forward softmax;
  memory::desc qk_scratch, pv_scratch, softmax_scratch;
};

std::string CacheKey(const AttentionArgs& a, const MaskShape& m, int team) {
  uint32_t scale_bits;
  std::memcpy(&scale_bits, &a.scale, sizeof(scale_bits));
  return absl::StrCat(a.batch, ",", a.q_heads, ",", a.kv_heads, ",", a.q_len, ",", a.kv_len, ",", a.head_dim, ",",
                      a.v_head_dim, "|", a.q.stride_batch, ",", a.q.stride_head, ",", a.q.stride_seq, "|",
                      a.k.stride_batch, ",", a.k.stride_head, ",", a.k.stride_seq, "|", a.v.stride_batch, ",",
                      a.v.stride_head, ",", a.v.stride_seq, "|", a.y_stride_batch, ",", a.y_stride_head, ",",
                      a.y_stride_seq, "|", m.present, m.heads, m.rows, "|", scale_bits, "|", team);
}

std::shared_ptr<const Primitives> CreatePrimitives(const AttentionArgs& a, const MaskShape& m) {
  auto p = std::make_shared<Primitives>();
  const int64_t g = a.q_heads / a.kv_heads;
  const int64_t b = a.batch, hkv = a.kv_heads;
  p->q = Strided4d(b, hkv, a.q_len, a.head_dim, a.q.stride_batch, g * a.q.stride_head, a.q.stride_seq, 1);
  // Kᵀ read in place: [D, Tk] with strides (1, stride_seq).
  p->kt = Strided4d(b, hkv, a.head_dim, a.kv_len, a.k.stride_batch, a.k.stride_head, 1, a.k.stride_seq);
  p->v = Strided4d(b, hkv, a.kv_len, a.v_head_dim, a.v.stride_batch, a.v.stride_head, a.v.stride_seq, 1);
  p->y = Strided4d(b, hkv, a.q_len, a.v_head_dim, a.y_stride_batch, g * a.y_stride_head, a.y_stride_seq, 1);
  p->scores = Dense4d(b, hkv, a.q_len, a.kv_len);
  p->mask = Dense4d(b, m.heads ? hkv : 1, m.rows ? a.q_len : 1, a.kv_len);
  p->softmax_rows = memory::desc({g * b * hkv * a.q_len, a.kv_len}, memory::data_type::f32, memory::format_tag::ab);

  dnnl::primitive_attr qk_attr;
  qk_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  qk_attr.set_output_scales(0, {a.scale});
  if (m.present) {
    dnnl::post_ops ops;
    ops.append_binary(dnnl::algorithm::binary_add, p->mask);
    qk_attr.set_post_ops(ops);
  }
  dnnl::matmul::primitive_desc qk_pd(dnnl::matmul::desc(p->q, p->kt, p->scores), qk_attr, Engine());
  p->qk = dnnl::matmul(qk_pd);
  p->qk_scratch = qk_pd.scratchpad_desc();

  dnnl::primitive_attr sm_attr;
  sm_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::softmax_forward::primitive_desc sm_pd(
      dnnl::softmax_forward::desc(dnnl::prop_kind::forward_inference, p->softmax_rows, 1), sm_attr, Engine());
  p->softmax = dnnl::softmax_forward(sm_pd);
  p->softmax_scratch = sm_pd.scratchpad_desc();

  dnnl::primitive_attr pv_attr;
  pv_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::matmul::primitive_desc pv_pd(dnnl::matmul::desc(p->scores, p->v, p->y), pv_attr, Engine());
  p->pv = dnnl::matmul(pv_pd);
  p->pv_scratch = pv_pd.scratchpad_desc();
  return p;
}

/// Created once per shape and team size (some oneDNN implementations fix
/// their thread count when created: a softmax built for 2 threads and run
/// in a 1-thread call waited tens of ms for a sleeping second thread on
/// this loaded machine). The cache (ops/common/lru_cache.h) never makes a
/// caller whose primitives exist wait, builds each shape once, and drops the
/// least recently used shape when full (it used to take one mutex for every
/// lookup and clear itself completely at kMaxCachedShapes).
absl::StatusOr<std::shared_ptr<const Primitives>> GetPrimitives(const AttentionArgs& a, const MaskShape& m, int team) {
  static auto* cache = new LruCache<std::string, Primitives>(kMaxCachedShapes);
  return cache->GetOrCreate(CacheKey(a, m, team), [&]() -> absl::StatusOr<std::shared_ptr<const Primitives>> {
    try {
      ScopedOmpThreads threads(team);
      return CreatePrimitives(a, m);
    } catch (const dnnl::error& e) {
      return absl::UnimplementedError(absl::StrCat("attention: oneDNN rejects this shape: ", e.what()));
    }
  });
}

/// The additive mask, [G][B][Hkv or 1][Tq or 1][Tk]: the bias plus -inf
/// where causal / window / kv_valid_len hide a key.
void FillMask(const AttentionArgs& a, const MaskShape& m, float* mask, int team) {
  const int64_t groups = m.heads ? a.q_heads / a.kv_heads : 1;
  const int64_t kv_heads = m.heads ? a.kv_heads : 1, rows = m.rows ? a.q_len : 1;
  const int64_t n = groups * a.batch * kv_heads * rows;
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t r = 0; r < n; ++r) {
    const int64_t i = r % rows, kvh = (r / rows) % kv_heads, b = (r / (rows * kv_heads)) % a.batch;
    const int64_t g = r / (rows * kv_heads * a.batch);
    const int64_t head = kvh * (a.q_heads / a.kv_heads) + g;
    float* out = mask + r * a.kv_len;
    if (a.bias.data != nullptr) {
      std::memcpy(out, RowOf(a.bias, b, head, i), sizeof(float) * a.kv_len);
    } else {
      std::fill(out, out + a.kv_len, 0.0f);
    }
    // When rows do not vary there is no causal/window, so VisibleKeys does
    // not depend on the row.
    const KeyRange keys = VisibleKeys(a, b, i);
    if (keys.empty()) {
      std::fill(out, out + a.kv_len, kNegInf);
    } else {
      std::fill(out, out + keys.begin, kNegInf);
      std::fill(out + keys.end, out + a.kv_len, kNegInf);
    }
  }
}

/// softcap · tanh(x / softcap) on finite scores (-inf stays hidden).
void ApplySoftcap(const AttentionArgs& a, float* scores, int64_t count, int team) {
  const float cap = a.softcap, inv = 1.0f / a.softcap;
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t i = 0; i < count; ++i) {
    if (scores[i] != kNegInf) scores[i] = cap * std::tanh(scores[i] * inv);
  }
}

/// Softmax of a row with no visible key is NaN in oneDNN; such rows get the
/// probabilities that make P·V what a.masked_rows asks for (zeros, NaN, or
/// equal weights for the mean of V).
void FixFullyMaskedRows(const AttentionArgs& a, float* probs, int64_t rows, int team) {
  if (a.masked_rows == MaskedRows::kNaN) return;
  const float fill = a.masked_rows == MaskedRows::kUniform ? 1.0f / static_cast<float>(a.kv_len) : 0.0f;
#pragma omp parallel for num_threads(team) schedule(static)
  for (int64_t r = 0; r < rows; ++r) {
    float* row = probs + r * a.kv_len;
    if (std::isnan(row[0])) std::fill(row, row + a.kv_len, fill);
  }
}

std::vector<uint8_t> ScratchFor(const memory::desc& d) { return std::vector<uint8_t>(d.get_size()); }

}  // namespace

bool OneDnnSupports(const AttentionArgs& a) {
  // Fully hidden rows by fill take the flash or reference path (MaskedRowWeights per key).
  if (a.masked_rows == MaskedRows::kFills) return false;
  // A sink joins the softmax's denominator, which oneDNN's softmax has no term for.
  if (a.sinks != nullptr) return false;
  for (int64_t s : {a.q.stride_batch, a.q.stride_head, a.q.stride_seq, a.k.stride_batch, a.k.stride_head,
                    a.k.stride_seq, a.v.stride_batch, a.v.stride_head, a.v.stride_seq, a.y_stride_batch,
                    a.y_stride_head, a.y_stride_seq}) {
    if (s < 0) return false;
  }
  // The output cannot be broadcast; the bias rows must be contiguous.
  if ((a.batch > 1 && a.y_stride_batch == 0) || (a.q_heads > 1 && a.y_stride_head == 0) ||
      (a.q_len > 1 && a.y_stride_seq == 0)) {
    return false;
  }
  if (a.head_dim == 0 || a.v_head_dim == 0) return false;
  const double scores_bytes = 4.0 * a.batch * a.q_heads * a.q_len * a.kv_len;
  return scores_bytes <= static_cast<double>(kMaxScoresBytes);
}

absl::Status RunAttentionOneDnn(const AttentionArgs& a) {
  if (a.batch == 0 || a.q_heads == 0 || a.q_len == 0) return absl::OkStatus();
  if (!OneDnnSupports(a)) return absl::UnimplementedError("attention: shape not supported by the oneDNN path");
  if (a.kv_len == 0) {
    for (int64_t b = 0; b < a.batch; ++b)
      for (int64_t h = 0; h < a.q_heads; ++h)
        for (int64_t i = 0; i < a.q_len; ++i) std::fill(OutputRow(a, b, h, i), OutputRow(a, b, h, i) + a.v_head_dim, 0.0f);
    return absl::OkStatus();
  }
  const MaskShape m = MaskShapeOf(a);
  const int team = TeamSize(a);
  auto primitives = GetPrimitives(a, m, team);
  if (!primitives.ok()) return primitives.status();
  const Primitives& p = **primitives;
  const int64_t groups = a.q_heads / a.kv_heads;

  const int64_t rows = a.batch * a.q_heads * a.q_len;
  const int64_t group_scores = a.batch * a.kv_heads * a.q_len * a.kv_len;
  ScratchBuffer scores(rows * a.kv_len);
  if (scores.data() == nullptr) return absl::ResourceExhaustedError("attention: cannot allocate the scores");
  const int64_t group_mask = static_cast<int64_t>(p.mask.get_size() / sizeof(float));
  ScratchBuffer mask(m.present ? group_mask * (m.heads ? groups : 1) : 0, /*slot=*/1);
  if (mask.data() == nullptr) return absl::ResourceExhaustedError("attention: cannot allocate the mask");
  if (m.present) FillMask(a, m, mask.data(), team);
  try {
    ScopedOmpThreads threads(team);
    dnnl::engine& eng = Engine();
    dnnl::stream stream(eng);
    auto mem = [&](const memory::desc& d, const void* data) { return memory(d, eng, const_cast<void*>(data)); };
    std::vector<uint8_t> qk_scratch = ScratchFor(p.qk_scratch);
    for (int64_t g = 0; g < groups; ++g) {
      std::unordered_map<int, memory> args{{DNNL_ARG_SRC, mem(p.q, a.q.data + g * a.q.stride_head)},
                                           {DNNL_ARG_WEIGHTS, mem(p.kt, a.k.data)},
                                           {DNNL_ARG_DST, mem(p.scores, scores.data() + g * group_scores)},
                                           {DNNL_ARG_SCRATCHPAD, mem(p.qk_scratch, qk_scratch.data())}};
      if (m.present) {
        args[DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1] =
            mem(p.mask, mask.data() + (m.heads ? g * group_mask : 0));
      }
      p.qk.execute(stream, args);
    }
    if (a.softcap > 0.0f) ApplySoftcap(a, scores.data(), rows * a.kv_len, team);
    {
      std::vector<uint8_t> scratch = ScratchFor(p.softmax_scratch);
      memory all = mem(p.softmax_rows, scores.data());
      p.softmax.execute(stream, {{DNNL_ARG_SRC, all},
                                 {DNNL_ARG_DST, all},
                                 {DNNL_ARG_SCRATCHPAD, mem(p.softmax_scratch, scratch.data())}});
    }
    if (m.present) FixFullyMaskedRows(a, scores.data(), rows, team);
    std::vector<uint8_t> pv_scratch = ScratchFor(p.pv_scratch);
    for (int64_t g = 0; g < groups; ++g) {
      p.pv.execute(stream, {{DNNL_ARG_SRC, mem(p.scores, scores.data() + g * group_scores)},
                            {DNNL_ARG_WEIGHTS, mem(p.v, a.v.data)},
                            {DNNL_ARG_DST, mem(p.y, a.y + g * a.y_stride_head)},
                            {DNNL_ARG_SCRATCHPAD, mem(p.pv_scratch, pv_scratch.data())}});
    }
    stream.wait();
  } catch (const dnnl::error& e) {
    return absl::InternalError(absl::StrCat("attention: oneDNN execution failed: ", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace attune::attention
