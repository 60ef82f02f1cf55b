// Every ONNX backend test of the Attention op (test_attention_*, except the
// *_expanded function-body variants), found at run time and run through the
// registry with each attention backend, compared with the ONNX reference data.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
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

double ValueAt(const Tensor& t, int64_t i) {
  switch (t.type()) {
    case ElementType::kFloat32:
      return t.data<float>()[i];
    case ElementType::kFloat16:
      return HalfToFloat(t.data<Float16>()[i]);
    case ElementType::kBFloat16:
      return BFloat16ToFloat(t.data<BFloat16>()[i]);
    case ElementType::kFloat64:
      return t.data<double>()[i];
    default:
      return NAN;
  }
}

// ONNX's rule |a - e| <= 1e-7 + 1e-3·|e| per element (equal infinities and
// NaN pairs match), plus a max absolute error of 1e-4 for float32. Returns ""
// when the output matches, else what differs.
std::string Mismatch(const Tensor& actual, const Tensor& expected) {
  if (actual.type() != expected.type()) {
    return absl::StrCat("type ", ElementTypeName(actual.type()), " vs expected ", ElementTypeName(expected.type()));
  }
  if (actual.shape() != expected.shape()) {
    return absl::StrCat("shape ", ShapeToString(actual.shape()), " vs expected ", ShapeToString(expected.shape()));
  }
  double max_abs = 0.0;
  for (int64_t i = 0; i < expected.num_elements(); ++i) {
    const double a = ValueAt(actual, i);
    const double e = ValueAt(expected, i);
    if (a == e || (std::isnan(a) && std::isnan(e))) continue;
    const double err = std::fabs(a - e);
    if (!(err <= 1e-7 + 1e-3 * std::fabs(e))) {
      return absl::StrCat("element ", i, ": got ", a, ", expected ", e);
    }
    max_abs = std::max(max_abs, err);
  }
  if (expected.type() == ElementType::kFloat32 && max_abs > 1e-4) {
    return absl::StrCat("max abs error ", max_abs, " > 1e-4");
  }
  return "";
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
  if (KnownFailures().count(GetParam()) > 0) GTEST_SKIP() << KnownFailures().at(GetParam());
  absl::StatusOr<BackendTestCase> test = LoadBackendTestCase(GetParam());
  ASSERT_TRUE(test.ok()) << test.status();
  for (AttentionBackend backend : kBackends) {
    EXPECT_EQ(RunOne(*test, backend), "") << "backend " << static_cast<int>(backend);
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, AttentionBackendTest, ::testing::ValuesIn(AttentionBackendTests()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(AttentionBackendTest);

// Counts the whole set, so a missing data folder or a silently shrinking set
// fails loudly instead of passing with zero cases.
TEST(AttentionBackendSummary, EveryTestPassesOrIsListed) {
  const std::vector<std::string> names = AttentionBackendTests();
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
