// A scoped buffer from the process-wide buffer pool (buffer_pool.h): scratch
// memory that a kernel needs for one call. Released buffers go back to the
// pool, so repeated calls reuse warm pages (no page faults) while the bytes
// kept between calls stay under the pool's one process-wide limit, however
// many threads call.
#pragma once

#include <cstddef>

#include "core/memory/buffer_pool.h"

namespace attune {

class PooledBuffer {
 public:
  /// At least `bytes` bytes, 64-byte aligned, contents unspecified; data() is
  /// null when the allocation fails.
  explicit PooledBuffer(size_t bytes) : bytes_(bytes), data_(AcquireBuffer(bytes)) {}
  ~PooledBuffer() { ReleaseBuffer(data_, bytes_); }
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;

  void* data() const { return data_; }

 private:
  size_t bytes_;
  void* data_;
};

}  // namespace attune
