// The tensor buffer pool: released buffers come back for the next allocation
// of their size class, zero-filled when they become a tensor, and the byte
// limit bounds what is held.
#include "core/memory/buffer_pool.h"

#include <cstring>

#include "attune/tensor.h"
#include "gtest/gtest.h"

namespace attune {
namespace {

class BufferPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!BufferPoolingEnabled()) GTEST_SKIP() << "pooling is off in sanitizer builds";
    TrimBufferPool();
    SetBufferPoolLimit(int64_t{1} << 30);
  }
  void TearDown() override { SetBufferPoolLimit(int64_t{1} << 30); }
};

TEST_F(BufferPoolTest, ReleasedBufferServesTheNextAllocationOfItsSizeClass) {
  void* a = AcquireBuffer(100000);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  ReleaseBuffer(a, 100000);
  EXPECT_GE(GetBufferPoolStats().retained_bytes, 100000);
  const int64_t hits = GetBufferPoolStats().hits;
  void* b = AcquireBuffer(99000);  // same class (up to 106496 bytes)
  EXPECT_EQ(a, b);
  EXPECT_EQ(GetBufferPoolStats().hits, hits + 1);
  EXPECT_EQ(GetBufferPoolStats().retained_bytes, 0);
  void* c = AcquireBuffer(200000);  // another class: a fresh buffer
  EXPECT_NE(c, b);
  ReleaseBuffer(b, 99000);
  ReleaseBuffer(c, 200000);
}

TEST_F(BufferPoolTest, SmallBuffersAreNotHeld) {
  void* p = AcquireBuffer(1000);
  ASSERT_NE(p, nullptr);
  ReleaseBuffer(p, 1000);
  EXPECT_EQ(GetBufferPoolStats().retained_bytes, 0);
}

TEST_F(BufferPoolTest, LimitBoundsTheHeldBytes) {
  SetBufferPoolLimit(300000);
  void* a = AcquireBuffer(200000);
  void* b = AcquireBuffer(200000);
  ReleaseBuffer(a, 200000);
  ReleaseBuffer(b, 200000);  // would exceed the limit: freed
  EXPECT_LE(GetBufferPoolStats().retained_bytes, 300000);
  EXPECT_GT(GetBufferPoolStats().retained_bytes, 0);
  SetBufferPoolLimit(0);
  EXPECT_EQ(GetBufferPoolStats().retained_bytes, 0);
}

TEST_F(BufferPoolTest, ReusedMemoryIsZeroWhenItBecomesATensor) {
  const void* first = nullptr;
  {
    Tensor t = *Tensor::Create(ElementType::kFloat32, {256, 256});
    first = t.raw_data();
    std::memset(t.data<float>(), 0x7f, t.byte_size());
  }
  Tensor again = *Tensor::Create(ElementType::kFloat32, {256, 256});
  EXPECT_EQ(again.raw_data(), first);
  for (float v : again.values<float>()) ASSERT_EQ(v, 0.0f);
}

}  // namespace
}  // namespace attune
