// Reuse of large tensor buffers between runs. Every run of a model allocates
// the same intermediate tensors again; handing fresh pages to each of them
// costs a page fault per 4 KiB (on virtual machines several microseconds
// each), which dominated small models. Released buffers of 64 KiB and more are
// kept in size classes and handed out again; smaller ones go back to malloc,
// whose arenas already recycle them.
#pragma once

#include <cstddef>
#include <cstring>
#include <cstdint>

namespace attune {

struct BufferPoolStats {
  int64_t retained_bytes = 0;  // held for reuse now
  int64_t hits = 0;            // allocations served from the pool
  int64_t misses = 0;          // pooled-size allocations that went to the system
};

/// A 64-byte-aligned buffer of at least `bytes` bytes (contents unspecified),
/// or nullptr when the system is out of memory. Release with ReleaseBuffer.
void* AcquireBuffer(size_t bytes);

/// Marks memory handed out uninitialised: filled with 0xff bytes (NaN for
/// floats, -1 for integers) in sanitizer builds, left as it is otherwise.
inline void PoisonUninitialized(void* p, size_t bytes) {
#ifdef ATTUNE_POISON_UNINITIALIZED
  std::memset(p, 0xff, bytes);
#else
  (void)p;
  (void)bytes;
#endif
}

/// Returns a buffer from AcquireBuffer(bytes); it is kept for reuse while the
/// pool holds less than its byte limit, freed otherwise.
void ReleaseBuffer(void* p, size_t bytes);

/// Sets how many bytes released buffers may occupy in total (default 1 GiB);
/// 0 disables pooling and frees what is held.
void SetBufferPoolLimit(int64_t bytes);

/// Frees every retained buffer.
void TrimBufferPool();

BufferPoolStats GetBufferPoolStats();

/// False in sanitizer builds, where every buffer goes straight back to the system.
bool BufferPoolingEnabled();

}  // namespace attune
