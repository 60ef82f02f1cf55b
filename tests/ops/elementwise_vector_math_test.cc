// The vectorised float32 kernels (ops/elementwise/vector_math.h), every
// function on every ISA level this CPU has, against double-precision std::
// references over a dense sweep of inputs: a stride through all 2^32 bit
// patterns (every exponent, subnormals, NaNs), fine grids where the
// functions bend, and the special and threshold values. Results must have
// the reference's class (NaN, infinity, zero) and sign, and stay within the
// measured error bound docs/onnx-ops.md states.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "ops/common/cpu_features.h"
#include "ops/elementwise/vector_math.h"
#include "tests/ops/elementwise_test_util.h"

namespace attune::elementwise {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

double SigmoidRef(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
double SoftplusRef(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
// x·Φ(x) through erfc, which (unlike 1 + erf) keeps its precision for negative x.
double GeluErfRef(double x) { return 0.5 * x * std::erfc(-x / std::sqrt(2.0)); }
// ½x(1 + tanh y) = x / (1 + e^-2y), which keeps its precision for negative x.
double GeluTanhArgument(double x) { return 2 * std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x); }
double GeluTanhRef(double x) { return x / (1 + std::exp(-GeluTanhArgument(x))); }
// The float kernel must round z = 2y; sigmoid(z) magnifies that relative
// error by its condition number z · (1 - sigmoid(z)), about |z| for z << 0.
double GeluTanhCondition(double x) {
  const double z = GeluTanhArgument(x);
  return std::isfinite(z) ? 1 + std::fabs(z) * (1 - 1 / (1 + std::exp(-z))) : 1;
}

double MishRef(double x) { return x * std::tanh(SoftplusRef(x)); }
double HardSwishRef(double x) { return x * std::clamp(x / 6 + 0.5, 0.0, 1.0); }
// Rounding x / 6 before adding 1/2 costs relative precision where the sum
// cancels (x near -3): the sum's condition number.
double HardSwishCondition(double x) {
  const double t = x / 6 + 0.5;
  return t > 0 && t < 1 ? 1 + std::fabs(x / 6) / t : 1;
}

struct OpSpec {
  VectorOp op;
  double (*reference)(double);
  double max_ulp;  // the bound docs/onnx-ops.md states
  /// When set, the bound at x is max_ulp · condition(x).
  double (*condition)(double) = nullptr;
};

const OpSpec kSpecs[] = {
    {VectorOp::kExp, [](double x) { return std::exp(x); }, 1.0},
    {VectorOp::kLog, [](double x) { return std::log(x); }, 1.0},
    {VectorOp::kTanh, [](double x) { return std::tanh(x); }, 1.5},
    {VectorOp::kErf, [](double x) { return std::erf(x); }, 1.5},
    {VectorOp::kSigmoid, SigmoidRef, 2.5},
    {VectorOp::kSoftplus, SoftplusRef, 2.0},
    {VectorOp::kGeluErf, GeluErfRef, 8.5},
    {VectorOp::kGeluTanh, GeluTanhRef, 3.0, GeluTanhCondition},
    {VectorOp::kMish, MishRef, 3.5},
    {VectorOp::kHardSwish, HardSwishRef, 2.0, HardSwishCondition},
};
static_assert(std::size(kSpecs) == kVectorOpCount, "one spec per VectorOp, in enum order");

/// |y - ref| in units of the float spacing at ref (2^-149 below the normal
/// range); an infinite y counts as 2^128, so that rounding to inf next to
/// FLT_MAX costs what it should. Assumes the classes already agree.
double UlpError(float y, double ref) {
  const double big = std::ldexp(1.0, 128);
  const double yd = std::isinf(y) ? std::copysign(big, y) : y;
  const double rd = std::fabs(ref) > big ? std::copysign(big, ref) : ref;
  int exponent = 0;
  std::frexp(rd, &exponent);
  const double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(yd - rd) / ulp;
}

/// Inputs for every op: the sweep, the grids and the edges.
std::vector<float> SweepInputs() {
  std::vector<float> x;
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 4099) x.push_back(std::bit_cast<float>(uint32_t(bits)));
  for (int i = -16 * 2048; i <= 16 * 2048; ++i) x.push_back(static_cast<float>(i) / 2048);  // [-16, 16]
  for (int i = -65536; i <= 65536; ++i) x.push_back(static_cast<float>(i) / 65536);         // [-1, 1]
  const float edges[] = {0.0f, kInf, kNaN, std::numeric_limits<float>::denorm_min(),
                         std::numeric_limits<float>::min(), std::numeric_limits<float>::max(), 1.0f, 2.0f,
                         0.625f, std::sqrt(2.0f), 6.0f, 10.0f, 10.0f * std::sqrt(2.0f), 88.7228394f, 88.72284f,
                         89.0f, 87.3365479f, 103.972076f, 104.0f, 108.6f, 112.0f, 150.0f, 16.0f, 20.0f,
                         1e10f, 1e20f, 1e30f, 1e-20f, 1e-40f};
  for (float e : edges)
    for (float s : {1.0f, -1.0f})
      for (float v : {e, std::nextafter(e, 0.0f), std::nextafter(e, kInf)}) x.push_back(s * v);
  while (x.size() % 16 != 5) x.push_back(0.5f);  // a tail after the last whole vector
  return x;
}

const std::vector<float>& Inputs() {
  static const std::vector<float> inputs = SweepInputs();
  return inputs;
}

class VectorMathAccuracy : public ::testing::TestWithParam<std::tuple<int, Isa>> {};

TEST_P(VectorMathAccuracy, MatchesDoubleReferenceWithinBound) {
  const OpSpec& spec = kSpecs[std::get<0>(GetParam())];
  ASSERT_EQ(static_cast<int>(spec.op), std::get<0>(GetParam()));
  const Isa isa = std::get<1>(GetParam());
  if (!IsaSupported(isa)) GTEST_SKIP() << "CPU lacks " << IsaName(isa);
  const VectorMathKernels& kernels = VectorMathKernelsFor(isa);
  const std::vector<float>& x = Inputs();
  std::vector<float> y(x.size());
  kernels.unary[static_cast<int>(spec.op)](x.data(), y.data(), static_cast<int64_t>(x.size()));

  double max_ulp = 0;
  float worst = 0;
  int class_failures = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = spec.reference(x[i]);
    const bool same_class = std::isnan(ref) ? std::isnan(y[i])
                            : std::isinf(ref) ? y[i] == ref
                            : ref == 0        ? y[i] == 0 && std::signbit(y[i]) == std::signbit(ref)
                                              : !std::isnan(y[i]) && (y[i] == 0 || std::signbit(y[i]) == std::signbit(ref));
    if (!same_class) {
      if (++class_failures <= 5)
        ADD_FAILURE() << VectorOpName(spec.op) << " " << kernels.name << ": x = " << x[i] << " gives " << y[i]
                      << ", want " << ref;
      continue;
    }
    if (std::isnan(ref) || std::isinf(ref)) continue;
    const double err = UlpError(y[i], ref) / (spec.condition ? spec.condition(x[i]) : 1.0);
    if (err > max_ulp) {
      max_ulp = err;
      worst = x[i];
    }
  }
  std::printf("%s %s: max error %.2f ulp%s at x = %.9g over %zu inputs\n", VectorOpName(spec.op), kernels.name,
              max_ulp, spec.condition ? " per unit of condition number" : "", worst, x.size());
  EXPECT_EQ(class_failures, 0);
  EXPECT_LE(max_ulp, spec.max_ulp) << VectorOpName(spec.op) << " " << kernels.name << " worst at x = " << worst;
}

TEST_P(VectorMathAccuracy, TailsMatchWholeVectors) {
  const OpSpec& spec = kSpecs[std::get<0>(GetParam())];
  const Isa isa = std::get<1>(GetParam());
  if (!IsaSupported(isa)) GTEST_SKIP() << "CPU lacks " << IsaName(isa);
  const VectorUnaryFn fn = VectorMathKernelsFor(isa).unary[static_cast<int>(spec.op)];
  std::vector<float> x(48);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 9.0f;
  std::vector<float> whole(x.size());
  fn(x.data(), whole.data(), static_cast<int64_t>(x.size()));
  for (int64_t n = 0; n <= 40; ++n) {
    std::vector<float> part(x.size(), -7.0f);
    fn(x.data() + 1, part.data(), n);  // an unaligned start, too
    for (int64_t i = 0; i < n; ++i) {
      std::vector<float> one(1);
      fn(x.data() + 1 + i, one.data(), 1);
      ASSERT_EQ(std::bit_cast<uint32_t>(part[i]), std::bit_cast<uint32_t>(one[0])) << "n=" << n << " i=" << i;
    }
    for (size_t i = n; i < part.size(); ++i) ASSERT_EQ(part[i], -7.0f) << "wrote past n=" << n;
  }
  // In place.
  std::vector<float> inplace = x;
  fn(inplace.data(), inplace.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) ASSERT_EQ(std::bit_cast<uint32_t>(inplace[i]), std::bit_cast<uint32_t>(whole[i]));
}

INSTANTIATE_TEST_SUITE_P(
    AllOpsAllIsas, VectorMathAccuracy,
    ::testing::Combine(::testing::Range(0, kVectorOpCount), ::testing::Values(Isa::kGeneric, Isa::kAvx2, Isa::kAvx512)),
    [](const ::testing::TestParamInfo<std::tuple<int, Isa>>& info) {
      return std::string(VectorOpName(kSpecs[std::get<0>(info.param)].op)) + "_" +
             IsaName(std::get<1>(info.param));
    });

// x^n by multiplications, against pow in double, for every exponent the path takes.
class VectorPowIntAccuracy : public ::testing::TestWithParam<Isa> {};

TEST_P(VectorPowIntAccuracy, MatchesPowWithinBound) {
  if (!IsaSupported(GetParam())) GTEST_SKIP() << "CPU lacks " << IsaName(GetParam());
  const VectorMathKernels& kernels = VectorMathKernelsFor(GetParam());
  const std::vector<float>& x = Inputs();
  std::vector<float> y(x.size());
  // Measured bound per exponent 0..8 (docs/onnx-ops.md): one rounding per multiplication.
  const double bound[kMaxPowIntExponent + 1] = {0, 0, 0.5, 1.5, 2.0, 3.0, 3.5, 4.0, 5.0};
  for (int n = 0; n <= kMaxPowIntExponent; ++n) {
    kernels.pow_int(x.data(), y.data(), static_cast<int64_t>(x.size()), n);
    double max_ulp = 0;
    float worst = 0;
    int class_failures = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double ref = std::pow(static_cast<double>(x[i]), n);
      const double ref_float = static_cast<float>(ref);  // may overflow to inf
      const bool same_class = std::isnan(ref) ? std::isnan(y[i])
                              : ref == 0      ? y[i] == 0 && std::signbit(y[i]) == std::signbit(ref)
                                              : !std::isnan(y[i]) && std::signbit(y[i]) == std::signbit(ref);
      if (!same_class) {
        if (++class_failures <= 5)
          ADD_FAILURE() << kernels.name << ": " << x[i] << "^" << n << " gives " << y[i] << ", want " << ref;
        continue;
      }
      if (std::isnan(ref) || (std::isinf(ref_float) && std::isinf(y[i]))) continue;
      const double err = UlpError(y[i], ref);
      if (err > max_ulp) {
        max_ulp = err;
        worst = x[i];
      }
    }
    std::printf("Pow x^%d %s: max error %.2f ulp at x = %.9g\n", n, kernels.name, max_ulp, worst);
    EXPECT_EQ(class_failures, 0);
    EXPECT_LE(max_ulp, bound[n]) << "x^" << n << " " << kernels.name << " worst at x = " << worst;
  }
}

INSTANTIATE_TEST_SUITE_P(AllIsas, VectorPowIntAccuracy, ::testing::Values(Isa::kGeneric, Isa::kAvx2, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) { return std::string(IsaName(info.param)); });

// The threaded driver splits into chunks without changing a bit, and the ops
// reach it for float32 (and keep the scalar path for other types).
TEST(VectorMathDriver, ThreadedRunEqualsOneThread) {
  std::vector<float> x(200003);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 12.0f;
  for (int op = 0; op < kVectorOpCount; ++op) {
    std::vector<float> one(x.size()), two(x.size());
    RunVectorUnary(static_cast<VectorOp>(op), x.data(), one.data(), static_cast<int64_t>(x.size()), 1);
    RunVectorUnary(static_cast<VectorOp>(op), x.data(), two.data(), static_cast<int64_t>(x.size()), 2);
    ASSERT_EQ(std::memcmp(one.data(), two.data(), x.size() * sizeof(float)), 0) << VectorOpName(static_cast<VectorOp>(op));
  }
}

TEST(VectorMathDriver, FollowsTheForcedIsa) {
  std::vector<float> x(1000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.01f - 5.0f;
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    SetForcedIsa(isa);
    std::vector<float> via_driver(x.size()), direct(x.size());
    RunVectorUnary(VectorOp::kTanh, x.data(), via_driver.data(), static_cast<int64_t>(x.size()), 1);
    VectorMathKernelsFor(isa).unary[static_cast<int>(VectorOp::kTanh)](x.data(), direct.data(),
                                                                       static_cast<int64_t>(x.size()));
    EXPECT_EQ(via_driver, direct) << IsaName(isa);
  }
  SetForcedIsa(std::nullopt);
}

std::vector<float> RunFloat(const std::string& op, const std::vector<float>& x, int opset, Attributes attrs = {}) {
  auto out = testing::RunOp(op, {testing::Make<float>({static_cast<int64_t>(x.size())}, x)}, opset, std::move(attrs));
  EXPECT_TRUE(out.ok()) << op << ": " << out.status();
  return out.ok() ? testing::Values<float>(*out) : std::vector<float>{};
}

TEST(VectorMathOps, OpsUseTheVectorKernelsForFloat32) {
  struct Case {
    const char* op;
    int opset;
    const char* approximate;  // Gelu's attribute, or nullptr
    VectorOp kernel;
  };
  const Case cases[] = {
      {"Exp", 13, nullptr, VectorOp::kExp},         {"Log", 13, nullptr, VectorOp::kLog},
      {"Tanh", 13, nullptr, VectorOp::kTanh},       {"Erf", 13, nullptr, VectorOp::kErf},
      {"Sigmoid", 13, nullptr, VectorOp::kSigmoid}, {"Softplus", 1, nullptr, VectorOp::kSoftplus},
      {"Gelu", 20, "none", VectorOp::kGeluErf},     {"Gelu", 20, "tanh", VectorOp::kGeluTanh},
      {"Mish", 18, nullptr, VectorOp::kMish},       {"HardSwish", 14, nullptr, VectorOp::kHardSwish},
  };
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>(i) * 0.05f);
  x.push_back(kNaN);
  x.push_back(-kInf);
  for (const Case& c : cases) {
    Attributes attrs;
    if (c.approximate != nullptr) attrs = testing::Attrs({{"approximate", std::string(c.approximate)}});
    const std::vector<float> got = RunFloat(c.op, x, c.opset, std::move(attrs));
    std::vector<float> want(x.size());
    VectorMathKernelsFor(ActiveIsa()).unary[static_cast<int>(c.kernel)](x.data(), want.data(),
                                                                        static_cast<int64_t>(x.size()));
    ASSERT_EQ(got.size(), want.size()) << c.op;
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size() * sizeof(float)), 0) << VectorOpName(c.kernel);
  }
  // Float64 keeps std::tanh.
  auto d = testing::RunOp("Tanh", {testing::Make<double>({2}, {0.5, -3.0})}, 13);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(testing::Values<double>(*d), (std::vector<double>{std::tanh(0.5), std::tanh(-3.0)}));
}

TEST(VectorMathOps, PowWithSmallIntegerExponentMultiplies) {
  const std::vector<float> x = {-2.5f, -0.0f, 0.0f, 1.5f, 3.0f, kInf, -kInf, kNaN, 1e13f, 1e-15f};
  for (float e : {0.0f, 1.0f, 2.0f, 3.0f, 4.0f, 7.0f}) {
    auto out = testing::RunOp("Pow", {testing::Make<float>({10}, x), testing::Make<float>({}, {e})}, 15);
    ASSERT_TRUE(out.ok()) << out.status();
    const std::vector<float> y = testing::Values<float>(*out);
    for (size_t i = 0; i < x.size(); ++i) {
      const float want = std::pow(x[i], e);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(y[i])) << x[i] << "^" << e;
      } else if (std::isinf(want)) {
        EXPECT_EQ(y[i], want) << x[i] << "^" << e;
      } else {
        EXPECT_EQ(std::signbit(y[i]), std::signbit(want)) << x[i] << "^" << e;
        EXPECT_NEAR(y[i], want, 2.5e-7 * std::fabs(want)) << x[i] << "^" << e;
      }
    }
  }
  // An int64 exponent takes the same path; a fractional one keeps std::pow.
  auto cube = testing::RunOp("Pow", {testing::Make<float>({2}, {2.0f, -3.0f}), testing::Make<int64_t>({1}, {3})}, 15);
  ASSERT_TRUE(cube.ok()) << cube.status();
  EXPECT_EQ(testing::Values<float>(*cube), (std::vector<float>{8.0f, -27.0f}));
  auto root = testing::RunOp("Pow", {testing::Make<float>({2}, {2.0f, -4.0f}), testing::Make<float>({}, {0.5f})}, 15);
  ASSERT_TRUE(root.ok()) << root.status();
  EXPECT_FLOAT_EQ(testing::Values<float>(*root)[0], std::sqrt(2.0f));
  EXPECT_TRUE(std::isnan(testing::Values<float>(*root)[1]));
}

}  // namespace
}  // namespace attune::elementwise
