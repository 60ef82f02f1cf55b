// The shared row loop of LayerNormalization and RMSNormalization: per row of
// X viewed as [rows, features], statistics in a compute precision, then
// y = (x - mean) · inv_std · scale (+ bias). Rows are split over OpenMP threads.
// With a skip (attune.SkipLayerNormalization, SkipRMSNormalization) the row
// normalised is x + skip, rounded to X's type as the Add op rounds it, and
// that sum may be stored too: the residual stream and its norm in one pass.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "attune/tensor.h"
#include "ops/norm/param_view.h"

namespace attune {

struct NormalizeRowsJob {
  const Tensor* x = nullptr;
  /// Optional, x's type: rows of x + skip are normalised. Its shape is x's
  /// with leading dims 1 (or absent), so that its rows repeat over x's: row r
  /// of x adds row r % (rows of skip) (a position embedding over the batch).
  const Tensor* skip = nullptr;
  Tensor* sum = nullptr;         // optional with skip: x + skip is stored here (x's type and shape)
  Tensor* y = nullptr;           // same type and shape as x
  int64_t rows = 0, features = 0;
  const ParamView* scale = nullptr;
  const ParamView* bias = nullptr;  // nullptr when absent
  bool subtract_mean = true;        // false: RMS normalization (mean taken as 0)
  bool compute_in_double = false;   // else float
  double epsilon = 1e-5;
  Tensor* mean = nullptr;      // optional [rows] statistic outputs (float32, float64 or bfloat16)
  Tensor* inv_std = nullptr;
  int threads = 1;
};

/// Runs the job for float16, bfloat16, float32 or float64 X (scale and bias
/// of the same type).
absl::Status NormalizeRows(const NormalizeRowsJob& job);

}  // namespace attune
