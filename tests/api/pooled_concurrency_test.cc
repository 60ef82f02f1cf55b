// Session::Run from eight threads on a model whose intermediates are pooled:
// models/mha_tril_runtime (no mask buffer, so any length) at 512+ positions,
// where every activation is 128 KiB or more, above the buffer pool's 64 KiB
// threshold. Each call must give exactly the single-threaded bits, so a buffer
// handed from one run to another while still in use shows up as wrong output
// (and under TSan, with ATTUNE_BUFFER_POOL=1 keeping the pool on, as a race).
// The default is 8 threads x 20 calls; ATTUNE_STRESS_CALLS=200 is the full
// stress. Named *ConcurrencyTest so that scripts/tsan.sh runs it.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <latch>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "attune/session.h"
#include "core/memory/buffer_pool.h"
#include "gtest/gtest.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

constexpr int kThreads = 8;

int CallsPerThread() {
  const char* env = std::getenv("ATTUNE_STRESS_CALLS");
  return env != nullptr && std::atoi(env) > 0 ? std::atoi(env) : 20;
}

struct Case {
  std::vector<int64_t> shape;
  std::vector<float> input;
  Tensor expected;
};

TEST(PooledConcurrencyTest, EightThreadsOnPooledIntermediatesMatchSingleThreadedBits) {
  SessionOptions options;
  options.threads = 1;  // the threads are the callers; no OpenMP team inside a call
  auto session = Session::Create(SourceDir() + "/models/mha_tril_runtime/model.onnx", options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<Case> cases(kThreads);
  for (int k = 0; k < kThreads; ++k) {
    Case& c = cases[k];
    c.shape = {1, 512 + k % 4, 64};  // four lengths: neighbouring threads free buffers of other size classes
    std::mt19937 rng(k);
    std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
    c.input.resize(c.shape[1] * 64);
    for (float& v : c.input) v = uniform(rng);
    auto x = Tensor::Borrow({ElementType::kFloat32, c.shape, c.input.data()});
    ASSERT_TRUE(x.ok());
    auto y = (*session)->Run({{"x", *x}});
    ASSERT_TRUE(y.ok()) << y.status();
    c.expected = (*y)[0].second.Clone();
  }
  const int64_t hits_before = GetBufferPoolStats().hits;
  const int calls = CallsPerThread();
  std::atomic<int> differing{0}, failed{0};
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int k = 0; k < kThreads; ++k)
    threads.emplace_back([&, k] {
      const Case& c = cases[k];
      const Tensor x = *Tensor::Borrow({ElementType::kFloat32, c.shape, const_cast<float*>(c.input.data())});
      start.arrive_and_wait();
      for (int call = 0; call < calls; ++call) {
        auto y = (*session)->Run({{"x", x}});
        if (!y.ok()) {
          ++failed;
          continue;
        }
        const Tensor& got = (*y)[0].second;
        if (got.shape() != c.expected.shape() ||
            std::memcmp(got.raw_data(), c.expected.raw_data(), c.expected.byte_size()) != 0)
          ++differing;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(differing.load(), 0);
  // The test is about pooled buffers: make sure the pool served these runs.
  if (BufferPoolingEnabled()) EXPECT_GT(GetBufferPoolStats().hits - hits_before, int64_t{kThreads} * calls);
}

}  // namespace
}  // namespace attune::testing
