// The exact integer matrix product of MatMulInteger and the products built
// on it: acc[m, n] = Σ_k (a[m, k] − za[m]) · (b[k, n] − zb[n]) in int32, for
// int8 or uint8 operands with per-tensor, per-row (A) and per-column (B)
// zero points. Every path gives the same bits: the sums are integers.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"

namespace attune::quantize {

/// Rows of an int8 or uint8 matrix with their zero points (one, or one per row).
struct IntegerRows {
  const void* data = nullptr;  // [m, k] row-major
  bool is_signed = false;
  int64_t m = 0, k = 0;
  const int32_t* zero_points = nullptr;  // nullptr: all zero
  int64_t zero_point_count = 0;          // 1 or m
  int32_t zero_point(int64_t row) const {
    return zero_points == nullptr ? 0 : zero_points[zero_point_count == 1 ? 0 : row];
  }
};

/// A [K, N] int8 / uint8 right-hand matrix prepared once (widened with its
/// zero points subtracted, or packed for oneDNN's int8 product on CPUs with
/// VNNI) and multiplied by any number of rows.
class IntegerProduct {
 public:
  /// b: [k, n] row-major; zero_points: empty, one, or n values.
  static absl::StatusOr<std::unique_ptr<IntegerProduct>> Create(const void* b, bool b_signed, int64_t k, int64_t n,
                                                                std::vector<int32_t> zero_points);
  virtual ~IntegerProduct() = default;
  int64_t k() const { return k_; }
  int64_t n() const { return n_; }
  /// out[a.m, n] = the exact product (a.k must equal k()).
  virtual absl::Status Run(const IntegerRows& a, int32_t* out, int threads) const = 0;
  /// Name of the path, for reports and tests ("portable", "onednn-vnni").
  virtual const char* path() const = 0;

  /// Forces the portable path for products created afterwards (tests).
  static void ForcePortable(bool force);

 protected:
  IntegerProduct(int64_t k, int64_t n) : k_(k), n_(n) {}
  int64_t k_, n_;
};

/// The portable product of a with b [k, n] (zero points: empty, one or n).
void PortableIntegerProduct(const IntegerRows& a, const void* b, bool b_signed, int64_t n,
                            const std::vector<int32_t>& b_zero_points, int32_t* out, int threads);

}  // namespace attune::quantize
