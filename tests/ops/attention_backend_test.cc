// Every ONNX backend test of the Attention op (test_attention_*, except the
// *_expanded function-body variants), found at run time and run through the
// registry with each attention backend, compared with the ONNX reference data.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/common/backend_index.h"
#include "tests/common/compare.h"
#include "tests/common/paths.h"
#include "tests/common/kernel_runner.h"
#include "tests/common/onnx_test_case.h"

namespace attune::testing {
namespace {

// Tests that may fail, with the reason. Empty: every test passes.
const std::map<std::string, std::string>& KnownFailures() {
  static const auto* known = new std::map<std::string, std::string>{};
  return *known;
}

std::vector<std::string> AttentionBackendTests() {
  std::vector<std::string> names;
  for (const std::string& name : ListBackendTests("test_attention_")) {
    if (name.find("_expanded") == std::string::npos) names.push_back(name);
  }
  return names;
}

// The largest |a - e| over elements that differ (equal infinities, such as
// the -inf of masked scores, count as equal).
double MaxAbsError(const Tensor& actual, const Tensor& expected) {
  double worst = 0.0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const float a = actual.data<float>()[i];
    const float e = expected.data<float>()[i];
    if (a != e) worst = std::max(worst, std::fabs(static_cast<double>(a) - e));
  }
  return worst;
}

// ONNX's rule |a - e| <= 1e-7 + 1e-3·|e| per element, plus a max absolute
// error of 1e-4 for float32. Returns "" when the output matches.
std::string Mismatch(const Tensor& actual, const Tensor& expected) {
  std::string diff = CompareTensors(actual, expected, Tolerance{.rtol = 1e-3, .atol = 1e-7});
  if (!diff.empty() || expected.type() != ElementType::kFloat32) return diff;
  const double max_abs = MaxAbsError(actual, expected);
  return max_abs > 1e-4 ? absl::StrCat("max abs error ", max_abs, " > 1e-4") : "";
}

// Runs one test with one backend; "" on success, else the first failure.
std::string RunOne(const BackendTestCase& test, AttentionBackend backend) {
  KernelCall call = test.call;
  call.options.attention_backend = backend;
  absl::StatusOr<std::vector<Tensor>> outputs = RunKernel(call);
  if (!outputs.ok()) return outputs.status().ToString();
  for (size_t i = 0; i < test.expected.size(); ++i) {
    if (test.expected[i].empty()) continue;
    if (i >= outputs->size() || (*outputs)[i].empty()) return absl::StrCat("output ", i, " missing");
    const std::string diff = Mismatch((*outputs)[i], test.expected[i]);
    if (!diff.empty()) return absl::StrCat("output ", i, ": ", diff);
  }
  return "";
}

constexpr AttentionBackend kBackends[] = {AttentionBackend::kAuto, AttentionBackend::kSimd, AttentionBackend::kOneDnn,
                                          AttentionBackend::kReference};

class AttentionBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(AttentionBackendTest, MatchesOnnxReference) {
  ATTUNE_SKIP_PLACEHOLDER_CASE(GetParam());
  if (KnownFailures().count(GetParam()) > 0) GTEST_SKIP() << KnownFailures().at(GetParam());
  absl::StatusOr<BackendTestCase> test = LoadBackendTestCase(GetParam());
  ASSERT_TRUE(test.ok()) << test.status();
  for (AttentionBackend backend : kBackends) {
    EXPECT_EQ(RunOne(*test, backend), "") << "backend " << static_cast<int>(backend);
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, AttentionBackendTest, ::testing::ValuesIn(CasesOrPlaceholder(AttentionBackendTests())),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// Counts the whole set, so a missing data folder or a silently shrinking set
// fails loudly instead of passing with zero cases.
TEST(AttentionBackendSummary, EveryTestPassesOrIsListed) {
  ATTUNE_SKIP_WITHOUT_BACKEND_DATA();
  const std::vector<std::string> names = AttentionBackendTests();
  // ONNX Attention is opset 23: the older ONNX 1.12 set has no case of it.
  if (names.empty() && FindBackendData().set == BackendData::Set::kOnnx112) GTEST_SKIP() << NoCaseMessage();
  ASSERT_FALSE(names.empty()) << "no test_attention_* folders under " << BackendTestRoot();
  int passed = 0;
  int listed = 0;
  for (const std::string& name : names) {
    absl::StatusOr<BackendTestCase> test = LoadBackendTestCase(name);
    ASSERT_TRUE(test.ok()) << name << ": " << test.status();
    const std::string failure = RunOne(*test, AttentionBackend::kAuto);
    if (failure.empty()) {
      ++passed;
    } else if (KnownFailures().count(name) > 0) {
      ++listed;
    } else {
      ADD_FAILURE() << name << ": " << failure;
    }
  }
  std::printf("ONNX Attention backend tests: %d of %zu pass, %d listed as known failures\n", passed, names.size(),
              listed);
  EXPECT_EQ(passed + listed, static_cast<int>(names.size()));
}

}  // namespace
}  // namespace attune::testing
