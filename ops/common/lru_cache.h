// A bounded cache of immutable objects (oneDNN primitives) shared by every
// thread, least recently used first out.
//
// Kernels look up a primitive on every call from many threads at once, and
// creating one takes milliseconds. A hit takes the lock shared and stamps the
// entry's last use with an atomic, so hits never wait for each other or for a
// creation in progress. A miss creates under a separate creation mutex (so two
// threads never build the same object twice, and only creators queue behind
// each other), then takes the lock exclusively just to insert, evicting the
// least recently used entry when full. Evicted objects live on while a caller
// still holds their shared_ptr.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"

namespace attune {

template <typename Key, typename Value>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  LruCache(const LruCache&) = delete;
  LruCache& operator=(const LruCache&) = delete;

  /// The cached object for `key`, or the one `make()` creates (an
  /// absl::StatusOr<std::shared_ptr<const Value>>; an error is returned and
  /// nothing is cached).
  template <typename Make>
  absl::StatusOr<std::shared_ptr<const Value>> GetOrCreate(const Key& key, Make&& make) {
    if (std::shared_ptr<const Value> hit = Find(key)) return hit;
    std::lock_guard<std::mutex> creating(create_mu_);
    if (std::shared_ptr<const Value> hit = Find(key)) return hit;  // made while this thread waited
    absl::StatusOr<std::shared_ptr<const Value>> made = make();
    if (!made.ok()) return made.status();
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (entries_.size() >= capacity_) EvictOldestLocked();
    auto entry = std::make_unique<Entry>();
    entry->value = *made;
    entry->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    entries_[key] = std::move(entry);
    return made;
  }

  /// The cached object or null; a hit counts as a use.
  std::shared_ptr<const Value> Find(const Key& key) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = entries_.find(key);
    if (it == entries_.end()) return nullptr;
    it->second->last_use.store(clock_.fetch_add(1, std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    return it->second->value;
  }

  /// Whether `key` is cached, without counting a use (for tests).
  bool Contains(const Key& key) const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return entries_.contains(key);
  }

  size_t size() const {
    std::shared_lock<std::shared_mutex> lock(mu_);
    return entries_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  struct Entry {
    std::shared_ptr<const Value> value;
    mutable std::atomic<uint64_t> last_use{0};
  };

  // A linear scan: capacities are tens of entries, and eviction happens only
  // on a miss, which costs a primitive creation anyway.
  void EvictOldestLocked() {
    auto oldest = entries_.end();
    uint64_t oldest_use = UINT64_MAX;
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      const uint64_t use = it->second->last_use.load(std::memory_order_relaxed);
      if (use < oldest_use) {
        oldest_use = use;
        oldest = it;
      }
    }
    if (oldest != entries_.end()) entries_.erase(oldest);
  }

  const size_t capacity_;
  mutable std::shared_mutex mu_;  // guards entries_ (the map); last_use is atomic
  std::mutex create_mu_;          // one creation at a time
  absl::flat_hash_map<Key, std::unique_ptr<Entry>> entries_;
  mutable std::atomic<uint64_t> clock_{0};
};

}  // namespace attune
