// The flash (tiled, online-softmax) attention kernels: the plan every ISA
// variant shares, and the per-ISA entry points.
//
// Layout of one task's work (a query block of one (batch, head)): scores are
// kept TRANSPOSED, St[key][query], so that queries run along SIMD lanes. The
// row max, the rescale factors and the exp are then plain vertical vector
// operations (no horizontal reductions), K and V are read in place from the
// caller's strided rows (no packing: K rows are the broadcast operand of the
// Q·Kᵀ micro-GEMM, Qᵀ of the block is the vector operand), and the output
// accumulator is Ot[v_dim][query], normalised and transposed once at the end.
#pragma once

#include <cstdint>

#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

struct FlashPlan {
  int64_t block_q = 64;   // query rows per task
  int64_t block_k = 192;  // keys per tile
  float log2_scale = 1.0f;  // scale * log2(e), folded into Qᵀ

  // Per-thread scratch, in floats from a 64-byte aligned base.
  int64_t qt_offset = 0;    // [head_dim][block_q]   scaled Qᵀ
  int64_t st_offset = 0;    // [block_k][block_q]    scores, then probabilities
  int64_t ot_offset = 0;    // [v_head_dim][block_q] output accumulator
  int64_t max_offset = 0;   // [block_q] running max (log2 units)
  int64_t sum_offset = 0;   // [block_q] running sum
  int64_t tile_max_offset = 0;  // [block_q]
  int64_t lo_offset = 0;    // [block_q] int32: first visible key per row
  int64_t hi_offset = 0;    // [block_q] int32: one past the last visible key
  int64_t scratch_floats = 0;
};

struct FlashTask {
  int64_t batch = 0;
  int64_t head = 0;
  int64_t q_begin = 0;
  int64_t q_end = 0;
};

/// The decode path: one task is a chunk of keys of one (batch, kv head)
/// against every query row of the heads sharing that kv head; its partial
/// result per row is (max, sum, unnormalised acc[v_head_dim]).
struct DecodeTask {
  int64_t batch = 0;
  int64_t kv_head = 0;
  int64_t k_begin = 0;
  int64_t k_end = 0;
  float* partial = nullptr;  // rows x (2 + v_head_dim): [max, sum, acc...]
};

/// One ISA's kernels.
struct FlashKernels {
  const char* name;
  void (*query_block)(const AttentionArgs& args, const FlashPlan& plan, const FlashTask& task, float* scratch);
  /// `rows` = group * q_len rows, in (head-in-group, query) order.
  void (*decode_chunk)(const AttentionArgs& args, float log2_scale, const DecodeTask& task, int64_t group);
  /// y = exp2(x) with the kernels' polynomial (n a multiple of 16), for tests.
  void (*exp2)(const float* x, float* y, int64_t n);
};

namespace flash_generic {
const FlashKernels& Kernels();
}
namespace flash_avx2 {
const FlashKernels& Kernels();
}
namespace flash_avx512 {
const FlashKernels& Kernels();
}

/// Query rows up to which RunFlashAttention takes the decode path.
inline constexpr int64_t kFlashDecodeMaxQueryLen = 4;

/// Runs the flash path with the active ISA (or the forced one); assumes the
/// arguments were validated and that FlashSupports(args) holds.
absl::Status RunFlashAttention(const AttentionArgs& args);

/// The flash path handles every AttentionArgs except sizes beyond int32 key indices.
bool FlashSupports(const AttentionArgs& args);

/// The plan RunFlashAttention would use (exposed for tests and benchmarks).
FlashPlan MakeFlashPlan(const AttentionArgs& args);

/// Overrides of the automatic choices, for tests (to reach every
/// micro-kernel and both paths) and tuning; 0 / kAuto = automatic.
/// Not thread-safe against running kernels.
struct FlashOverrides {
  enum class Path { kAuto, kQueryBlocks, kDecode };
  enum class Pack { kAuto, kNever, kAlways };
  int64_t block_q = 0;  // 16, 32 or 64 (AVX-512 uses a different micro-kernel for each)
  int64_t block_k = 0;  // a multiple of 48
  Path path = Path::kAuto;
  Pack pack = Pack::kAuto;  // copy strided K/V rows into contiguous panels
};
void SetFlashOverrides(const FlashOverrides& overrides);

}  // namespace attune::attention
