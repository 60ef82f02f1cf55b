// The flash driver: picks the ISA variant, sizes the tiles, orders the tasks
// heaviest first and runs them in ONE OpenMP region; the decode path splits
// the KV sequence across threads and merges the partial softmax states.
#include "ops/attention/kernels/flash_attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <memory>
#include <new>
#include <vector>

#include "ops/attention/kernels/attention_mask.h"
#include "ops/attention/kernels/scratch_buffer.h"
#include "ops/common/cpu_features.h"
#include "ops/common/team_monitor.h"

namespace attune::attention {
namespace {

constexpr float kLog2e = 1.44269504088896340736f;
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
/// Bytes of L1d for the score tile: half of this machine's 48 KiB.
constexpr int64_t kL1TileBytes = 24 * 1024;
/// K/V panels are built when each row is read by at least this many query
/// blocks (query blocks per head x query heads per kv head) and they fit in
/// kPackMaxBytes.
constexpr int64_t kPackMinReuse = 32;
constexpr int64_t kPackMaxBytes = int64_t{256} << 20;
/// Smallest KV chunk one decode task streams.
constexpr int64_t kDecodeMinChunk = 256;

FlashOverrides g_overrides;

const FlashKernels& KernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return flash_avx512::Kernels();
    case Isa::kAvx2: return flash_avx2::Kernels();
    case Isa::kGeneric: break;
  }
  return flash_generic::Kernels();
}

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

/// Unmasked (query, key) pairs of a query block, for ordering tasks.
int64_t TaskCost(const AttentionArgs& a, const FlashTask& t) {
  int64_t cost = 0;
  for (int64_t i = t.q_begin; i < t.q_end; ++i) {
    const KeyRange r = VisibleKeys(a, t.batch, i);
    cost += r.end - r.begin;
  }
  return cost;
}

absl::Status RunQueryBlocks(const AttentionArgs& a, const FlashKernels& kernels) {
  const FlashPlan plan = MakeFlashPlan(a);
  std::vector<FlashTask> tasks;
  std::vector<int64_t> cost;
  for (int64_t b = 0; b < a.batch; ++b) {
    for (int64_t q0 = 0; q0 < a.q_len; q0 += plan.block_q) {
      FlashTask t{b, 0, q0, std::min(q0 + plan.block_q, a.q_len)};
      const int64_t c = TaskCost(a, t);  // the same for every head
      for (int64_t h = 0; h < a.q_heads; ++h) {
        t.head = h;
        tasks.push_back(t);
        cost.push_back(c);
      }
    }
  }
  std::vector<int64_t> order(tasks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return cost[x] > cost[y]; });

  const int threads = static_cast<int>(std::min<int64_t>(TeamSize(a), static_cast<int64_t>(tasks.size())));
  const int64_t per_thread = RoundUp(plan.scratch_floats, 16);
  ScratchBuffer scratch(per_thread * threads);
  if (scratch.data() == nullptr) return absl::ResourceExhaustedError("attention: cannot allocate flash scratch");

  // K and V rows strided in memory (B,T,H·D inputs: 3 KB apart with 12
  // heads) cost a TLB miss and a missed hardware prefetch per row, and every
  // query block of a head reads them again: such rows are first copied into
  // contiguous [batch][kv_head][kv_len][dim] panels when they are re-read
  // often enough. Measured (12 heads, D=64, causal, AVX-512, 1 thread,
  // GFLOP/s per CPU-second, best of 5, two runs): T=2048 packed 134-144 vs
  // 118-122 in place; T=1024 107-110 vs 118-127; T=512 109-112 vs 111-117;
  // T=256 74-88 vs 93-102. The copy pays from ~32 reads per row.
  const bool strided = a.k.stride_seq != a.head_dim || a.v.stride_seq != a.v_head_dim;
  const int64_t reuse = (a.q_len + plan.block_q - 1) / plan.block_q * (a.q_heads / a.kv_heads);
  const bool fits = 4 * a.batch * a.kv_heads * a.kv_len * (a.head_dim + a.v_head_dim) <= kPackMaxBytes;
  bool pack = strided && fits && reuse >= kPackMinReuse;
  if (g_overrides.pack != FlashOverrides::Pack::kAuto) pack = g_overrides.pack == FlashOverrides::Pack::kAlways;
  AttentionArgs packed = a;
  ScratchBuffer panels(pack ? a.batch * a.kv_heads * a.kv_len * (a.head_dim + a.v_head_dim) : 0, /*slot=*/1);
  if (panels.data() == nullptr) return absl::ResourceExhaustedError("attention: cannot allocate K/V panels");
  float* k_panels = panels.data();
  float* v_panels = k_panels + a.batch * a.kv_heads * a.kv_len * a.head_dim;
  if (pack) {
    packed.k = StridedView{k_panels, a.kv_heads * a.kv_len * a.head_dim, a.kv_len * a.head_dim, a.head_dim};
    packed.v = StridedView{v_panels, a.kv_heads * a.kv_len * a.v_head_dim, a.kv_len * a.v_head_dim, a.v_head_dim};
  }
  const int64_t pack_rows = a.batch * a.kv_heads * a.kv_len;
  const int64_t n = static_cast<int64_t>(tasks.size());
  WorkerStartProbe probe;
#pragma omp parallel num_threads(threads)
  {
    if (omp_get_thread_num() > 0) probe.Arrive();
    if (pack) {
#pragma omp for schedule(static)
      for (int64_t r = 0; r < pack_rows; ++r) {
        const int64_t j = r % a.kv_len, kvh = (r / a.kv_len) % a.kv_heads, b = r / (a.kv_len * a.kv_heads);
        std::memcpy(k_panels + r * a.head_dim, RowOf(a.k, b, kvh, j), sizeof(float) * a.head_dim);
        std::memcpy(v_panels + r * a.v_head_dim, RowOf(a.v, b, kvh, j), sizeof(float) * a.v_head_dim);
      }
    }
    float* mine = scratch.data() + per_thread * omp_get_thread_num();
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < n; ++i) kernels.query_block(packed, plan, tasks[order[i]], mine);
  }
  return absl::OkStatus();
}

absl::Status RunDecode(const AttentionArgs& a, const FlashKernels& kernels) {
  const int64_t group = a.q_heads / a.kv_heads;
  const int64_t rows = group * a.q_len;
  const int64_t heads = a.batch * a.kv_heads;
  const int team = TeamSize(a);
  // Enough chunks for every thread to have a few, none shorter than the minimum.
  const int64_t max_chunks = std::max<int64_t>(1, a.kv_len / kDecodeMinChunk);
  const int64_t chunks = std::clamp<int64_t>((4 * team + heads - 1) / heads, 1, max_chunks);
  const int64_t chunk_len = RoundUp((a.kv_len + chunks - 1) / chunks, 64);
  const int64_t part_stride = 2 + a.v_head_dim;
  const int64_t n = heads * chunks;
  ScratchBuffer partial(n * rows * part_stride);
  if (partial.data() == nullptr) return absl::ResourceExhaustedError("attention: cannot allocate decode scratch");
  const float log2_scale = a.scale * kLog2e;
  const int threads = static_cast<int>(std::min<int64_t>(team, std::max<int64_t>(n, a.batch * a.q_heads)));
  WorkerStartProbe probe;
#pragma omp parallel num_threads(threads)
  {
    if (omp_get_thread_num() > 0) probe.Arrive();
#pragma omp for schedule(dynamic, 1)
    for (int64_t t = 0; t < n; ++t) {
      DecodeTask task;
      task.batch = t / (a.kv_heads * chunks);
      task.kv_head = (t / chunks) % a.kv_heads;
      task.k_begin = std::min(a.kv_len, (t % chunks) * chunk_len);
      task.k_end = std::min(a.kv_len, task.k_begin + chunk_len);
      task.partial = partial.data() + t * rows * part_stride;
      kernels.decode_chunk(a, log2_scale, task, group);
    }
    // Merge: row r of (b, kv head) over its chunks.
#pragma omp for schedule(static)
    for (int64_t x = 0; x < heads * rows; ++x) {
      const int64_t bk = x / rows, r = x % rows;
      const int64_t b = bk / a.kv_heads, kvh = bk % a.kv_heads;
      const float* first = partial.data() + (bk * chunks) * rows * part_stride + r * part_stride;
      // The partial maxima are in natural units with a bias (flash_decode.h).
      const float unit = a.bias.data != nullptr ? kLog2e : 1.0f;
      float m = -std::numeric_limits<float>::infinity();
      for (int64_t c = 0; c < chunks; ++c) m = std::max(m, first[c * rows * part_stride]);
      const int64_t head = kvh * group + r / a.q_len, row = r % a.q_len;
      if (m == -std::numeric_limits<float>::infinity()) {  // no visible key
        WriteMaskedRow(a, b, head, row);
        continue;
      }
      float* y = OutputRow(a, b, head, row);
      std::fill(y, y + a.v_head_dim, 0.0f);
      float l = 0.0f;
      for (int64_t c = 0; c < chunks; ++c) {
        const float* p = first + c * rows * part_stride;
        if (p[0] == -std::numeric_limits<float>::infinity()) continue;
        const float w = std::exp2((p[0] - m) * unit);
        l += w * p[1];
        for (int64_t d = 0; d < a.v_head_dim; ++d) y[d] += w * p[2 + d];
      }
      // The sink joins the merged denominator (maxima in the partials' units).
      const float inv = !(l > 0.0f)         ? 0.0f
                        : a.sinks == nullptr ? 1.0f / l
                                             : SinkNormalizer(a, head, unit == 1.0f ? kLog2e : 1.0f, unit, m, l);
      for (int64_t d = 0; d < a.v_head_dim; ++d) y[d] *= inv;
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool FlashSupports(const AttentionArgs& a) {
  // Key indices and the query block offsets are int32 inside the kernels.
  return a.kv_len < kInt32Max && a.q_len < kInt32Max && a.head_dim > 0 && a.v_head_dim > 0;
}

FlashPlan MakeFlashPlan(const AttentionArgs& a) {
  FlashPlan p;
  p.log2_scale = a.scale * kLog2e;
  // Query blocks of 64 rows, halved (down to 16) for short sequences and
  // while there are too few tasks to keep every thread busy.
  const int64_t team = TeamSize(a);
  p.block_q = 64;
  while (p.block_q > 16 &&
         (a.q_len <= p.block_q / 2 || a.batch * a.q_heads * ((a.q_len + p.block_q - 1) / p.block_q) < 4 * team)) {
    p.block_q /= 2;
  }
  // Keys per tile: the score tile St (block_k x block_q floats) stays within
  // half of the 48 KiB L1d, where the exp pass and the P·V micro-kernel
  // re-read it (Vᵀ·Pᵀ streams it once per 6 rows of v_head_dim); a
  // multiple of 48 so that every micro-kernel's row count divides it.
  // Measured at T=2048 (AVX-512, 1 thread, GFLOP/s per CPU-second on the
  // shared machine, best of 5): block_k 48/96/144/192 at block_q 64 within
  // noise of each other (118-135), 288/384 about 10% lower.
  p.block_k = std::clamp<int64_t>(kL1TileBytes / (4 * p.block_q) / 48 * 48, 48, 384);
  if (g_overrides.block_q > 0) p.block_q = g_overrides.block_q;
  if (g_overrides.block_k > 0) p.block_k = g_overrides.block_k;

  int64_t offset = 0;
  auto take = [&](int64_t floats) {
    const int64_t at = offset;
    offset += RoundUp(floats, 16);
    return at;
  };
  p.qt_offset = take(a.head_dim * p.block_q);
  p.st_offset = take(p.block_k * p.block_q);
  p.ot_offset = take(a.v_head_dim * p.block_q);
  p.max_offset = take(p.block_q);
  p.sum_offset = take(p.block_q);
  p.tile_max_offset = take(p.block_q);
  p.lo_offset = take(p.block_q);
  p.hi_offset = take(p.block_q);
  p.scratch_floats = offset;
  return p;
}

void SetFlashOverrides(const FlashOverrides& overrides) { g_overrides = overrides; }

absl::Status RunFlashAttention(const AttentionArgs& a) {
  if (a.batch == 0 || a.q_heads == 0 || a.q_len == 0) return absl::OkStatus();
  const FlashKernels& kernels = KernelsFor(ActiveIsa());
  const bool decode = g_overrides.path == FlashOverrides::Path::kAuto
                          ? a.q_len <= kFlashDecodeMaxQueryLen
                          : g_overrides.path == FlashOverrides::Path::kDecode;
  if (decode) return RunDecode(a, kernels);
  return RunQueryBlocks(a, kernels);
}

}  // namespace attune::attention
