// Per-call float scratch for the attention kernels, from the process-wide
// buffer pool (core/memory/pooled_buffer.h). Fresh multi-MB allocations cost
// more in page faults and zero-filling than the attention work they hold on
// this VM (measured: the oneDNN path at T=1024 spent 2/3 of its time there),
// so released scratch is kept for the next call. It used to be kept per
// thread (up to 2 x 64 MiB each until the thread exited, unbounded with many
// caller threads); the pool bounds what every thread together keeps by its one
// limit (SetBufferPoolLimit) and hands a buffer freed on one thread to the next
// caller on any other. Contents are uninitialised.
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/memory/pooled_buffer.h"

namespace attune::attention {

class ScratchBuffer {
 public:
  /// Null data() when the allocation fails. `slot` is kept for the callers
  /// that hold two buffers at once; pooled buffers need no slot.
  explicit ScratchBuffer(int64_t floats, int slot = 0)
      : buffer_(static_cast<size_t>(floats < 1 ? 1 : floats) * sizeof(float)) {
    (void)slot;
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  float* data() const { return static_cast<float*>(buffer_.data()); }

 private:
  PooledBuffer buffer_;
};

}  // namespace attune::attention
