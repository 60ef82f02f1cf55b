// Splitting element ranges across the OpenMP team.
#pragma once

#include <algorithm>
#include <cstdint>

#include "ops/common/team_monitor.h"

namespace attune {

/// Elements per thread below which an element-wise loop stays on one thread:
/// cheap ops (add, compare, copy) are memory-bound and need large chunks to
/// amortise the team start-up (a few microseconds); transcendental ones need fewer.
inline constexpr int64_t kCheapOpGrain = int64_t{1} << 15;
inline constexpr int64_t kCostlyOpGrain = int64_t{1} << 12;

/// Calls fn(begin, end) on disjoint contiguous ranges covering [0, total), at
/// most `threads` of them and each at least `grain` long, in parallel when
/// there is more than one. fn must be safe to call concurrently.
/// Each region reports how late its workers started (team_monitor.h), and
/// the team shrinks to the calling thread while they start late.
template <typename Fn>
void ParallelForRange(int64_t total, int64_t grain, int threads, const Fn& fn) {
  if (total <= 0) return;
  const int64_t chunks =
      std::clamp<int64_t>(total / std::max<int64_t>(grain, 1), 1, std::max(EffectiveThreads(threads), 1));
  if (chunks == 1) {
    fn(0, total);
    return;
  }
  WorkerStartProbe probe;
#pragma omp parallel for num_threads(static_cast<int>(chunks)) schedule(static)
  for (int64_t c = 0; c < chunks; ++c) {
    if (c > 0) probe.Arrive();  // with one chunk per thread, chunk c > 0 is a worker's first work
    fn(total * c / chunks, total * (c + 1) / chunks);
  }
}

}  // namespace attune
