// The sequence lengths a mask subgraph must be evaluated at for the
// evaluation to prove anything. A window or an offset only shows at lengths
// beyond it (a window of 16 looks causal up to 16 keys), so every constant of
// the subgraph that can be one gives probe lengths around it: Trilu's k, the
// bounds of Slice and Range, comparison constants, window offsets, integer
// attributes, and the dims of every constant (the length of a mask buffer).
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/rewrite/shape_subgraph.h"

namespace attune::attention {

/// Lengths beyond this are not probed (a T x T mask at 4096 is 16M entries);
/// a mask whose constants reach further is not proven at all.
inline constexpr int64_t kMaxProbeLength = 4096;

struct ProbeLengths {
  /// Sorted and distinct, each in [1, cap + 2]: the fixed small set plus
  /// c - 1, c, c + 1 and c + 2 for every constant c (a window w written as
  /// "j < i - w" first shows at length w + 2).
  std::vector<int64_t> lengths;
  /// The largest constant that gave lengths (0: none); verify mode runs its
  /// inputs beyond it.
  int64_t longest_constant = 0;
};

/// The lengths for `cut`, or FailedPrecondition naming the constant that is
/// longer than `cap` (then the mask cannot be proven on probes that reach it).
/// Integers of 2^30 or more are "to the end" sentinels (Slice ends, Clip
/// bounds) and give no length. A float constant beyond the cap is a fill value
/// (finfo.min, -1e4, -1e9) when it is only selected, multiplied, clamped or
/// reshaped; one that is compared or added is refused like an integer.
absl::StatusOr<ProbeLengths> ProbeLengthsOf(const ShapeSubgraph& cut, int64_t cap = kMaxProbeLength);

}  // namespace attune::attention
