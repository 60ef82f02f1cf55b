// ops/common/lru_cache.h, the cache of oneDNN primitives: least recently used
// out, each key made once, and a hit never waits for a creation in progress.
#include "ops/common/lru_cache.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace attune {
namespace {

using Cache = LruCache<std::string, int>;

absl::StatusOr<std::shared_ptr<const int>> Make(int v) { return std::make_shared<const int>(v); }

TEST(LruCacheTest, EvictsTheLeastRecentlyUsedKey) {
  Cache cache(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cache.GetOrCreate("k" + std::to_string(i), [&] { return Make(i); }).ok());
  ASSERT_NE(cache.Find("k0"), nullptr);  // k1 is now the oldest use
  ASSERT_TRUE(cache.GetOrCreate("k3", [] { return Make(3); }).ok());
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_TRUE(cache.Contains("k0"));
  EXPECT_FALSE(cache.Contains("k1"));
  EXPECT_TRUE(cache.Contains("k2"));
  EXPECT_TRUE(cache.Contains("k3"));
  ASSERT_TRUE(cache.GetOrCreate("k4", [] { return Make(4); }).ok());
  EXPECT_FALSE(cache.Contains("k2"));  // k2 was next oldest; k0's hit keeps it
  EXPECT_TRUE(cache.Contains("k0"));
}

TEST(LruCacheTest, HitDoesNotCallMakeAndErrorsAreNotCached) {
  Cache cache(4);
  int made = 0;
  auto make = [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
    ++made;
    return Make(7);
  };
  ASSERT_TRUE(cache.GetOrCreate("a", make).ok());
  auto again = cache.GetOrCreate("a", make);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(**again, 7);
  EXPECT_EQ(made, 1);
  auto failed = cache.GetOrCreate("b", [] { return absl::StatusOr<std::shared_ptr<const int>>(absl::UnimplementedError("no")); });
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_FALSE(cache.Contains("b"));
}

// A creator blocks inside make() until the readers have done all their hits;
// if a hit waited for the creation (one mutex around lookup and creation, as
// the cache used to be), the readers could not finish and the creator's wait
// times out.
TEST(LruCacheTest, HitsOnExistingKeysDoNotWaitForACreation) {
  Cache cache(64);
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(cache.GetOrCreate("k" + std::to_string(i), [&] { return Make(i); }).ok());
  constexpr int kReaders = 4, kHits = 2000;
  std::mutex mu;
  std::condition_variable cv;
  int readers_done = 0;
  std::atomic<bool> creating{false};
  bool readers_finished_during_creation = false;
  std::thread creator([&] {
    auto made = cache.GetOrCreate("slow", [&]() -> absl::StatusOr<std::shared_ptr<const int>> {
      creating = true;
      std::unique_lock<std::mutex> lock(mu);
      readers_finished_during_creation =
          cv.wait_for(lock, std::chrono::seconds(20), [&] { return readers_done == kReaders; });
      return Make(99);
    });
    EXPECT_TRUE(made.ok());
  });
  while (!creating) std::this_thread::yield();
  std::vector<std::thread> readers;
  std::atomic<int> wrong{0};
  for (int r = 0; r < kReaders; ++r)
    readers.emplace_back([&, r] {
      for (int h = 0; h < kHits; ++h) {
        const int key = (r + h) % 8;
        auto hit = cache.GetOrCreate("k" + std::to_string(key), [] { return Make(-1); });
        if (!hit.ok() || **hit != key) ++wrong;
      }
      std::lock_guard<std::mutex> lock(mu);
      ++readers_done;
      cv.notify_all();
    });
  for (std::thread& t : readers) t.join();
  creator.join();
  EXPECT_TRUE(readers_finished_during_creation);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_TRUE(cache.Contains("slow"));
}

// Many readers on existing keys while one thread keeps inserting new keys
// into a full cache: every hit returns its own key's object and the size never
// passes the capacity (TSan: no race between the shared and exclusive paths).
TEST(LruCacheTest, ReadersAndAnInserterTogether) {
  constexpr size_t kCapacity = 16;
  Cache cache(kCapacity);
  auto maker = [](int v) { return [v] { return Make(v); }; };
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(cache.GetOrCreate("hot" + std::to_string(i), maker(i)).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> wrong{0};
  std::atomic<size_t> largest{0};
  std::vector<std::thread> readers;
  for (int r = 0; r < 4; ++r)
    readers.emplace_back([&, r] {
      for (int h = 0; !stop; ++h) {
        const int key = (r + h) % 4;
        auto hit = cache.GetOrCreate("hot" + std::to_string(key), maker(key));
        if (!hit.ok() || **hit != key) ++wrong;
        size_t now = cache.size();
        size_t seen = largest.load();
        while (now > seen && !largest.compare_exchange_weak(seen, now)) {}
      }
    });
  std::thread inserter([&] {
    for (int i = 0; i < 500; ++i)
      if (!cache.GetOrCreate("cold" + std::to_string(i), maker(1000 + i)).ok()) ++wrong;
    stop = true;
  });
  inserter.join();
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LE(largest.load(), kCapacity);
  EXPECT_LE(cache.size(), kCapacity);
}

}  // namespace
}  // namespace attune
