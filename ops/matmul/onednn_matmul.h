// float32 matrix products through oneDNN. This is the only file pair that
// includes oneDNN's matmul API: the 2.x op-descriptor API used here changes in
// 3.x, so the rest of the engine sees only these two entry points.
#pragma once

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/constant_holder.h"
#include "ops/matmul/matmul_shape.h"

namespace attune {

/// A constant right-hand matrix multiplied by any number of rows at run time.
/// Packed once into the blocked layout oneDNN prefers, the weights can be held
/// by the packed copy alone (holder(): the graph then releases the original).
/// A plain [K, N] matrix may instead be used where it is (`in_place`, for
/// weights that other nodes read too: the model's weights are then held once; weights beyond the caches, or whose rows are 2 KiB-aligned
/// and crowd L1 sets, are reordered block by block into a scratch copy for each
/// product of many rows, which costs a quarter to a third of oneDNN's rate on a
/// packed copy at 128 rows: the copy, not the product, see ReadSlowlyInPlace);
/// a transposed or scaled one is reordered once, at prepare time, into the
/// blocked layout oneDNN prefers. One to four rows go through the panel GEMV
/// (gemv_weights.h), more through oneDNN, whose primitives are created per
/// (rows, threads) and cached. Run is thread-safe.
class OneDnnConstantMatMul {
 public:
  struct Options {
    bool transpose_b = false;  // b is stored [N, K] instead of [K, N]
    float alpha = 1.0f;        // folded into the packed weights
    const float* bias = nullptr;  // optional [N] row added to every output row
    /// Use b in place when it needs no reordering (not transposed, alpha 1):
    /// b must then outlive this object.
    bool in_place = false;
  };
  static absl::StatusOr<std::unique_ptr<OneDnnConstantMatMul>> Create(const float* b, int64_t k, int64_t n,
                                                                   const Options& options);
  /// The product on weights another product packed and holds (`held`, from
  /// its holder()), when they are the [K, N] matrix that `transpose_b` asks
  /// for, unscaled; nullptr when `held` is something else. No copy is made.
  static absl::StatusOr<std::unique_ptr<OneDnnConstantMatMul>> FromHeld(
      const std::shared_ptr<const ConstantHolder>& held, bool transpose_b, const float* bias);
  ~OneDnnConstantMatMul();

  int64_t k() const;
  int64_t n() const;
  /// Whether b is used where it is (no copy of it is held).
  bool in_place() const;
  /// The packed weights as the holder of the constant b was, when b can be
  /// restored from them exactly (packed unscaled); nullptr when in place or
  /// scaled. Shared: products made FromHeld use the same copy.
  std::shared_ptr<const ConstantHolder> holder() const;
  /// Columns per block in which in-place weights are repacked for products
  /// of many rows; 0 when they are always read where they are.
  int64_t repack_columns() const;
  /// c[M, N] = alpha · a[M, K] · B (+ bias), all row-major. `threads` > 0
  /// sets the OpenMP team size for this call only.
  absl::Status Run(const float* a, int64_t m, float* c, int threads) const;

 private:
  struct Impl;
  explicit OneDnnConstantMatMul(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// Whether a constant weight that one product alone reads is packed (and the
/// original released) rather than used in place: everywhere but where AVX2 is
/// the best ISA, where the row GEMM (gemm_rows.h) reads weights in place
/// faster than oneDNN's AVX2 kernels read their packed copy.
bool PackSoleReaderWeights();

/// c = a·b for float32 operands laid out as `shape` describes (dense
/// row-major, numpy batch broadcasting). trans_a / trans_b: the operand is
/// stored with its last two dims swapped; trans_a needs an unbatched A.
/// Primitives use runtime M, N and K and are cached per batch shape, so new
/// sequence lengths cost no primitive creation.
absl::Status OneDnnMatMul(const MatMulShape& shape, const float* a, const float* b, float* c, int threads,
                          bool trans_a = false, bool trans_b = false);

/// Whether OneDnnMatMul takes this many batch dims (oneDNN's rank limit).
bool OneDnnMatMulSupportsBatchRank(size_t batch_rank);

}  // namespace attune
