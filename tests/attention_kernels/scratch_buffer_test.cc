// The attention kernels' scratch comes from the process-wide buffer pool: what
// eight long-lived caller threads keep between calls is bounded by the pool's
// one limit (it used to be up to 2 x 64 MiB per thread until the thread
// exited), a buffer released on one thread serves the next call on another,
// and TrimBufferPool gives it all back while the threads still live.
#include "ops/attention/kernels/scratch_buffer.h"

#include <functional>
#include <latch>
#include <thread>
#include <vector>

#include "core/memory/buffer_pool.h"
#include "gtest/gtest.h"

namespace attune::attention {
namespace {

constexpr int64_t kFloats = int64_t{4} << 20;  // 16 MiB, a T=1024 scores buffer for 4 heads
constexpr int kThreads = 8;

class ScratchBufferTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BufferPoolingEnabled()) GTEST_SKIP() << "pooling is off (sanitizer build without ATTUNE_BUFFER_POOL=1)";
    TrimBufferPool();
  }
  void TearDown() override {
    SetBufferPoolLimit(int64_t{1} << 30);
    TrimBufferPool();
  }
};

// Eight threads take a scratch buffer at once, give it back, and stay alive.
void EightCallersThenIdle(const std::function<void()>& while_idle) {
  std::latch taken(kThreads), released(kThreads), measured(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      {
        ScratchBuffer scratch(kFloats, t % 2);
        ASSERT_NE(scratch.data(), nullptr);
        scratch.data()[kFloats - 1] = 1.0f;  // touch the last page
        taken.arrive_and_wait();  // all eight held at once
      }
      released.count_down();
      measured.wait();
    });
  released.wait();  // every buffer given back; the threads are parked on `measured`, alive
  while_idle();
  measured.count_down();
  for (std::thread& t : threads) t.join();
}

TEST_F(ScratchBufferTest, WhatIdleThreadsKeepIsBoundedByThePoolLimit) {
  constexpr int64_t kLimit = int64_t{48} << 20;  // room for 3 of the 8 buffers
  SetBufferPoolLimit(kLimit);
  EightCallersThenIdle([&] {
    const BufferPoolStats stats = GetBufferPoolStats();
    EXPECT_LE(stats.retained_bytes, kLimit);
    EXPECT_GT(stats.retained_bytes, 0);
  });
}

TEST_F(ScratchBufferTest, TrimReturnsScratchWhileTheThreadsLive) {
  EightCallersThenIdle([&] {
    EXPECT_GE(GetBufferPoolStats().retained_bytes, kFloats * 4);
    TrimBufferPool();
    EXPECT_EQ(GetBufferPoolStats().retained_bytes, 0);
  });
}

TEST_F(ScratchBufferTest, AnotherThreadReusesAReleasedBuffer) {
  float* first = nullptr;
  std::thread([&] {
    ScratchBuffer scratch(kFloats);
    first = scratch.data();
  }).join();
  const int64_t hits = GetBufferPoolStats().hits;
  float* second = nullptr;
  std::thread([&] {
    ScratchBuffer scratch(kFloats);
    second = scratch.data();
  }).join();
  EXPECT_EQ(first, second);
  EXPECT_EQ(GetBufferPoolStats().hits, hits + 1);
}

// Pooled or not (sanitizer builds), two live buffers never share memory.
TEST(ScratchBuffer, TwoBuffersOnOneThreadAreDistinct) {
  ScratchBuffer a(1000, 0), b(1000, 1), c(100000, 0);
  EXPECT_NE(a.data(), b.data());
  EXPECT_NE(a.data(), c.data());
  EXPECT_NE(b.data(), c.data());
}

}  // namespace
}  // namespace attune::attention
