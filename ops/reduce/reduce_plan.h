// How a reduction walks its input: reduced and kept dims coalesced into runs,
// the last run contiguous (the vectorised inner loop), the others iterated.
#pragma once

#include <cstdint>
#include <vector>

namespace attune::reduce {

struct ReducePlan {
  /// Kept runs before the last run (input strides), one output row per index.
  std::vector<int64_t> outer_sizes, outer_strides;
  /// Reduced runs before the last run (input strides).
  std::vector<int64_t> red_sizes, red_strides;
  /// The last run: contiguous in the input, reduced or kept.
  int64_t inner = 1;
  bool inner_reduced = false;
  int64_t outer_count = 1;  // product of outer_sizes
  int64_t red_count = 1;    // product of red_sizes
  int64_t group = 1;        // input elements folded into each output
};

/// The plan for reducing `reduced[d]` dims of a non-empty dense tensor of `shape`.
ReducePlan MakeReducePlan(const std::vector<int64_t>& shape, const std::vector<bool>& reduced);

/// Input offset of the index-th element of a (sizes, strides) run list, outermost first.
inline int64_t RunOffset(int64_t index, const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides) {
  int64_t offset = 0;
  for (int64_t k = static_cast<int64_t>(sizes.size()) - 1; k >= 0; --k) {
    offset += (index % sizes[k]) * strides[k];
    index /= sizes[k];
  }
  return offset;
}

}  // namespace attune::reduce
