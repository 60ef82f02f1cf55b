// Per-call float scratch that reuses the calling thread's previous buffer.
// Fresh multi-MB allocations cost more in page faults and zero-filling than
// the attention work they hold on this VM (measured: the oneDNN path at
// T=1024 spent 2/3 of its time there), so each thread keeps one 64-byte
// aligned buffer per slot of up to kMaxKeptBytes (64 MiB) for its next call; larger
// requests, and a slot already in use on this thread, get a buffer
// allocated (and freed) for this call. Contents are uninitialised.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>

namespace attune::attention {

class ScratchBuffer {
 public:
  static constexpr int64_t kMaxKeptBytes = int64_t{64} << 20;
  static constexpr int kSlots = 2;

  /// Null data() when the allocation fails.
  explicit ScratchBuffer(int64_t floats, int slot = 0) {
    const size_t bytes = (static_cast<size_t>(floats < 1 ? 1 : floats) * sizeof(float) + 63) / 64 * 64;
    thread_local Kept kept[kSlots];
    Kept& k = kept[slot];
    if (static_cast<int64_t>(bytes) > kMaxKeptBytes || k.in_use) {
      own_.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      data_ = own_.get();
      return;
    }
    if (k.bytes < bytes) {
      k.buffer.reset(static_cast<float*>(std::aligned_alloc(64, bytes)));
      k.bytes = k.buffer ? bytes : 0;
    }
    data_ = k.buffer.get();
    k.in_use = true;
    in_use_ = &k.in_use;
  }
  ~ScratchBuffer() {
    if (in_use_ != nullptr) *in_use_ = false;
  }
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;

  float* data() const { return data_; }

 private:
  struct Free {
    void operator()(float* p) const { std::free(p); }
  };
  struct Kept {
    std::unique_ptr<float, Free> buffer;
    size_t bytes = 0;
    bool in_use = false;
  };
  std::unique_ptr<float, Free> own_;
  float* data_ = nullptr;
  bool* in_use_ = nullptr;
};

}  // namespace attune::attention
