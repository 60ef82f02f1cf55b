// Session::Run from many threads on one Session gives, call for call, exactly
// the bits a single-threaded run gives.
#include <atomic>
#include <cstring>
#include <functional>
#include <latch>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "tests/api/model_inputs.h"
#include "tests/common/compare.h"

namespace attune::testing {
namespace {

constexpr int kThreads = 8;
constexpr int kCallsPerThread = 200;

struct Case {
  std::vector<int64_t> shape;
  std::vector<float> input;
  Tensor expected;  // the single-threaded run's output
};

bool SameBits(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

class ConcurrencyTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    SessionOptions options;
    options.threads = GetParam();
    auto session = Session::Create(MhaCausalDir() + "/model.onnx", options);
    ASSERT_TRUE(session.ok()) << session.status();
    session_ = *std::move(session);
    ASSERT_EQ(session_->inputs().size(), 1u);
    ASSERT_EQ(session_->outputs().size(), 1u);

    // Sanity: the engine computes the model (against PyTorch's output).
    const Tensor x = ReadMhaCausalInput();
    auto y = session_->Run({{"x", x}});
    ASSERT_TRUE(y.ok()) << y.status();
    auto torch = ReadNpyFile(MhaCausalDir() + "/outputs/y.npy");
    ASSERT_TRUE(torch.ok()) << torch.status();
    EXPECT_EQ(CompareTensors((*y)[0].second, *torch, {1e-4, 1e-5}), "");

    // Single-threaded reference outputs, one per thread's input variant.
    for (int k = 0; k < kThreads; ++k) {
      Case c;
      c.input = InputVariant(x, k, &c.shape);
      auto out = session_->Run({{"x", BorrowFloats(c.input, c.shape)}});
      ASSERT_TRUE(out.ok()) << out.status();
      c.expected = (*out)[0].second.Clone();
      cases_.push_back(std::move(c));
    }
    // The variants must differ, or a run reading another run's memory could go unnoticed.
    ASSERT_FALSE(cases_[0].expected.shape() == cases_[4].expected.shape() &&
                 SameBits(cases_[0].expected, cases_[4].expected));
  }

  std::unique_ptr<Session> session_;
  std::vector<Case> cases_;
};

// Starts `threads` threads at once; thread k runs body(k), which returns how
// many of its results differed from the expected bits, or an error.
void RunTogether(int threads, const std::function<absl::StatusOr<int>(int)>& body) {
  std::vector<std::string> errors(threads);
  std::atomic<int> mismatches{0};
  std::latch start(threads);
  std::vector<std::thread> workers;
  for (int k = 0; k < threads; ++k) {
    workers.emplace_back([&, k] {
      start.arrive_and_wait();
      absl::StatusOr<int> differing = body(k);
      if (differing.ok()) mismatches += *differing;
      else errors[k] = differing.status().ToString();
    });
  }
  for (std::thread& t : workers) t.join();
  for (int k = 0; k < threads; ++k) EXPECT_EQ(errors[k], "") << "thread " << k;
  EXPECT_EQ(mismatches.load(), 0);
}

TEST_P(ConcurrencyTest, EightThreadsRunMatchesSingleThreadedRunBitForBit) {
  RunTogether(kThreads, [&](int k) -> absl::StatusOr<int> {
    Case& c = cases_[k];
    const NamedTensors inputs = {{"x", BorrowFloats(c.input, c.shape)}};
    int differing = 0;
    for (int call = 0; call < kCallsPerThread; ++call) {
      auto out = session_->Run(inputs);
      if (!out.ok()) return out.status();
      if (!SameBits((*out)[0].second, c.expected)) ++differing;
    }
    return differing;
  });
}

TEST_P(ConcurrencyTest, EightThreadsRunIntoOwnBuffersMatchesBitForBit) {
  RunTogether(kThreads, [&](int k) -> absl::StatusOr<int> {
    Case& c = cases_[k];
    const NamedTensors inputs = {{"x", BorrowFloats(c.input, c.shape)}};
    std::vector<float> y(c.expected.num_elements());
    const NamedTensorViews outputs = {{"y", TensorView{ElementType::kFloat32, c.shape, y.data()}}};
    int differing = 0;
    for (int call = 0; call < kCallsPerThread; ++call) {
      std::fill(y.begin(), y.end(), -1.0f);
      absl::Status status = session_->RunInto(inputs, outputs);
      if (!status.ok()) return status;
      if (std::memcmp(y.data(), c.expected.raw_data(), c.expected.byte_size()) != 0) ++differing;
    }
    return differing;
  });
}

TEST_P(ConcurrencyTest, SessionsCreatedOnFourThreadsAtOnceComputeTheSameBits) {
  RunTogether(4, [&](int k) -> absl::StatusOr<int> {
    SessionOptions options;
    options.threads = GetParam();
    auto session = Session::Create(MhaCausalDir() + "/model.onnx", options);
    if (!session.ok()) return session.status();
    Case& c = cases_[k];
    auto out = (*session)->Run({{"x", BorrowFloats(c.input, c.shape)}});
    if (!out.ok()) return out.status();
    return SameBits((*out)[0].second, c.expected) ? 0 : 1;
  });
}

// threads = 0 uses every core; 1 and 2 pin the OpenMP team of each run.
INSTANTIATE_TEST_SUITE_P(ThreadsOption, ConcurrencyTest, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return "threads" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace attune::testing
