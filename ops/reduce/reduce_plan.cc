#include "ops/reduce/reduce_plan.h"

#include <cstddef>

namespace attune::reduce {

ReducePlan MakeReducePlan(const std::vector<int64_t>& shape, const std::vector<bool>& reduced) {
  // Runs of neighbouring dims with the same role; size-1 dims play no part.
  struct Run {
    int64_t size, stride;
    bool reduced;
  };
  std::vector<Run> runs;
  int64_t stride = 1;
  std::vector<int64_t> strides(shape.size());
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    strides[d] = stride;
    stride *= shape[d];
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!runs.empty() && runs.back().reduced == reduced[d]) {
      runs.back().size *= shape[d];
      runs.back().stride = strides[d];
    } else {
      runs.push_back({shape[d], strides[d], reduced[d]});
    }
  }
  ReducePlan plan;
  if (runs.empty()) return plan;  // one element: inner = 1, kept
  plan.inner = runs.back().size;
  plan.inner_reduced = runs.back().reduced;
  runs.pop_back();
  for (const Run& r : runs) {
    if (r.reduced) {
      plan.red_sizes.push_back(r.size);
      plan.red_strides.push_back(r.stride);
      plan.red_count *= r.size;
    } else {
      plan.outer_sizes.push_back(r.size);
      plan.outer_strides.push_back(r.stride);
      plan.outer_count *= r.size;
    }
  }
  plan.group = plan.red_count * (plan.inner_reduced ? plan.inner : 1);
  return plan;
}

}  // namespace attune::reduce
