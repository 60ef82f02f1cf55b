#include "core/memory/buffer_pool.h"

#include <bit>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "absl/container/flat_hash_map.h"

namespace attune {
namespace {

constexpr size_t kAlignment = 64;
constexpr size_t kMinPooledBytes = size_t{64} << 10;

// AddressSanitizer must see every allocation and free to find misuse, so
// sanitizer builds pool nothing by default. ATTUNE_BUFFER_POOL=1 turns pooling
// on anyway (ThreadSanitizer then checks that a buffer passed between threads
// through the pool is ordered by its mutex), =0 turns it off in any build.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ATTUNE_POOL_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)  // clang's spelling
#define ATTUNE_POOL_SANITIZED 1
#endif
#endif
#ifdef ATTUNE_POOL_SANITIZED
constexpr bool kPoolingByDefault = false;
#else
constexpr bool kPoolingByDefault = true;
#endif

// Read once: a buffer acquired unpooled (rounded to 64 bytes) must never be
// released into a size class, so the choice cannot change while buffers live.
bool DecidePooling() {
  bool pooled = kPoolingByDefault;
  if (const char* env = std::getenv("ATTUNE_BUFFER_POOL"); env != nullptr && env[0] != '\0')
    pooled = env[0] != '0';
  return pooled;
}

// Four classes per power of two: at most 25% of a pooled buffer goes unused.
size_t SizeClass(size_t bytes) {
  const int top = std::bit_width(bytes - 1);  // bytes <= 2^top
  const size_t quarter = size_t{1} << (top - 3);
  return (bytes + quarter - 1) / quarter * quarter;
}

class BufferPool {
 public:
  void* Acquire(size_t bytes) {
    if (!pooling_ || bytes < kMinPooledBytes) return Allocate(Rounded(bytes));
    const size_t size = SizeClass(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = free_.find(size);
      if (it != free_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        retained_ -= static_cast<int64_t>(size);
        ++stats_.hits;
        return p;
      }
      ++stats_.misses;
    }
    return Allocate(size);
  }

  void Release(void* p, size_t bytes) {
    if (p == nullptr) return;
    if (!pooling_ || bytes < kMinPooledBytes) return std::free(p);
    const size_t size = SizeClass(bytes);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (retained_ + static_cast<int64_t>(size) <= limit_) {
        free_[size].push_back(p);
        retained_ += static_cast<int64_t>(size);
        return;
      }
    }
    std::free(p);
  }

  void SetLimit(int64_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      limit_ = bytes < 0 ? 0 : bytes;
    }
    if (bytes <= 0) Trim();
  }

  void Trim() {
    absl::flat_hash_map<size_t, std::vector<void*>> held;
    {
      std::lock_guard<std::mutex> lock(mu_);
      held.swap(free_);
      retained_ = 0;
    }
    for (auto& [size, buffers] : held)
      for (void* p : buffers) std::free(p);
  }

  bool pooling() const { return pooling_; }

  BufferPoolStats Stats() {
    std::lock_guard<std::mutex> lock(mu_);
    BufferPoolStats s = stats_;
    s.retained_bytes = retained_;
    return s;
  }

 private:
  static size_t Rounded(size_t bytes) {
    return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  }
  static void* Allocate(size_t bytes) { return std::aligned_alloc(kAlignment, bytes); }

  const bool pooling_ = DecidePooling();
  std::mutex mu_;
  absl::flat_hash_map<size_t, std::vector<void*>> free_;
  int64_t retained_ = 0;
  int64_t limit_ = int64_t{1} << 30;
  BufferPoolStats stats_;
};

// Never destroyed: tensors may be released during static destruction.
BufferPool& Pool() {
  static BufferPool* pool = new BufferPool();
  return *pool;
}

}  // namespace

void* AcquireBuffer(size_t bytes) { return Pool().Acquire(bytes); }
void ReleaseBuffer(void* p, size_t bytes) { Pool().Release(p, bytes); }
void SetBufferPoolLimit(int64_t bytes) { Pool().SetLimit(bytes); }
void TrimBufferPool() { Pool().Trim(); }
BufferPoolStats GetBufferPoolStats() { return Pool().Stats(); }
bool BufferPoolingEnabled() { return Pool().pooling(); }

}  // namespace attune
