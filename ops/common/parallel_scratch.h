// ParallelForRange for kernels whose every range needs scratch memory of its
// own (a packed panel, a strip of weights), taken from the process-wide pool.
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "core/memory/pooled_buffer.h"
#include "ops/common/parallel.h"

namespace attune {

/// Calls fn(begin, end, scratch) as ParallelForRange calls fn(begin, end),
/// `scratch` being `scratch_bytes` of 64-byte aligned memory for that range
/// alone. ResourceExhausted, naming `what`, when a range's scratch cannot be
/// allocated (that range is then not computed).
template <typename Fn>
absl::Status ParallelForRangeWithScratch(int64_t total, int64_t grain, int threads, size_t scratch_bytes,
                                         const char* what, const Fn& fn) {
  std::atomic<bool> no_scratch{false};
  ParallelForRange(total, grain, threads, [&](int64_t begin, int64_t end) {
    PooledBuffer scratch(scratch_bytes);
    if (scratch.data() == nullptr) {
      no_scratch.store(true, std::memory_order_relaxed);
      return;
    }
    fn(begin, end, scratch.data());
  });
  if (no_scratch.load(std::memory_order_relaxed))
    return absl::ResourceExhaustedError(std::string(what) + " cannot be allocated");
  return absl::OkStatus();
}

}  // namespace attune
