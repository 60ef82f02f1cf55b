// MatMulNBits files as the writers lay them out (tests/quantized/
// gen_matmul_nbits_fixtures.py: ONNX Runtime's quantizer, the genai builder,
// transformers.js, and the other bit widths, block sizes and zero-point
// forms), run by the Session at 1 and 2 threads and compared with the
// double-precision dequantize-then-multiply reference and with ONNX
// Runtime's output on the same file.
#include <cmath>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "attune/session.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

fs::path CaseDir(const std::string& name) { return fs::path(SourceDir()) / "tests" / "quantized" / "data" / name; }

std::vector<double> Values(const Tensor& t) {
  std::vector<double> v(t.num_elements());
  for (int64_t i = 0; i < t.num_elements(); ++i)
    v[i] = t.type() == ElementType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i];
  return v;
}

double MaxAbs(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, std::fabs(x));
  return m;
}

// max |a - b| / max |b| over the outputs where b is finite (infinite if a is not finite there)
double RelativeError(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0, m = 0;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isfinite(b[i])) {
      if (!std::isfinite(a[i])) return INFINITY;
      d = std::max(d, std::fabs(a[i] - b[i]));
      m = std::max(m, std::fabs(b[i]));
    }
  return d / std::max(m, 1e-30);
}

Tensor RunCase(const std::string& name, int threads) {
  SessionOptions options;
  options.threads = threads;
  auto session = Session::Create((CaseDir(name) / "model.onnx").string(), options);
  EXPECT_TRUE(session.ok()) << session.status();
  if (!session.ok()) return Tensor();
  auto a = ReadNpyFile((CaseDir(name) / "inputs" / "A.npy").string());
  EXPECT_TRUE(a.ok()) << a.status();
  auto out = (*session)->Run({{"A", *a}});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? (*out)[0].second : Tensor();
}

struct Case {
  const char* name;
  bool int8_activations;  // accuracy_level 4
};

class MatMulNBitsModelTest : public ::testing::TestWithParam<Case> {};

TEST_P(MatMulNBitsModelTest, MatchesReferenceAndOnnxRuntime) {
  const Case c = GetParam();
  const Tensor y1 = RunCase(c.name, 1);
  const Tensor y2 = RunCase(c.name, 2);
  ASSERT_FALSE(y1.empty());
  ASSERT_FALSE(y2.empty());
  ASSERT_EQ(y1.byte_size(), y2.byte_size());
  EXPECT_EQ(0, std::memcmp(y1.raw_data(), y2.raw_data(), y1.byte_size())) << "thread counts give different bits";
  const std::vector<double> y = Values(y1);
  const std::vector<double> ref = Values(*ReadNpyFile((CaseDir(c.name) / "reference.npy").string()));
  const std::vector<double> ort = Values(*ReadNpyFile((CaseDir(c.name) / "ort" / "Y.npy").string()));
  ASSERT_EQ(y.size(), ref.size());
  ASSERT_EQ(y.size(), ort.size());
  // A NaN or an infinity in A propagates as in the reference: such rows take the float32 path at every
  // accuracy_level (ONNX Runtime's level 4 quantizes a NaN away), so the comparisons below skip them.
  for (size_t i = 0; i < y.size(); ++i)
    if (!std::isfinite(ref[i])) {
      EXPECT_FALSE(std::isfinite(y[i])) << "output " << i << " should not be finite";
      if (std::isnan(ref[i])) EXPECT_TRUE(std::isnan(y[i])) << "output " << i << " should be NaN";
    }
  if (!c.int8_activations) {
    EXPECT_LE(RelativeError(y, ref), 1e-4);
    EXPECT_LE(RelativeError(y, ort), 1e-4);
    return;
  }
  // int8 activations: no further from the float32 model than ONNX Runtime is.
  const std::vector<double> fp32 = Values(*ReadNpyFile((CaseDir(c.name) / "fp32_reference.npy").string()));
  const double ours = RelativeError(y, fp32), theirs = RelativeError(ort, fp32);
  EXPECT_LE(ours, theirs * 1.05 + 1e-6) << "ours " << ours << " vs ONNX Runtime " << theirs;
  // And close to the exact product of the quantized weights (int8 steps of max|a|/127 per block).
  EXPECT_LE(RelativeError(y, ref), 2e-2);
}

INSTANTIATE_TEST_SUITE_P(Writers, MatMulNBitsModelTest,
                         ::testing::Values(Case{"ort_default_b128_asym", false},
                                           Case{"genai_cpu_b32_sym_acc4_decode", true},
                                           Case{"genai_cpu_b32_sym_acc4_prefill", true},
                                           Case{"tfjs_q4_b32_sym_bias_partial_block", false},
                                           Case{"int8_asym_b64_acc0", false}, Case{"int8_sym_b16_acc4", true},
                                           Case{"int8_asym_b32_acc4", true}, Case{"int4_asym_b64_acc4", true},
                                           Case{"int2_asym_b32", false}, Case{"int4_float_zero_points_b32", false},
                                           Case{"int4_b16_acc1_rank1", false}, Case{"genai_b32_sym_acc4_m17", true},
                                           Case{"genai_b32_sym_acc4_m64", true}, Case{"genai_b32_sym_acc4_m128", true},
                                           Case{"genai_b32_sym_acc4_m130_nonfinite", true},
                                           Case{"int4_asym_b64_acc4_m33", true}, Case{"int8_asym_b32_acc4_m40", true}),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace attune::testing
