// Swish(x) = x · sigmoid(alpha · x), the op the element-wise fusion writes
// for SiLU and QuickGELU: on every ISA level this CPU has and for float16,
// it gives the bits of the Mul, Sigmoid and Mul it is defined by (NaN,
// infinities and signed zeros included), since the fusion must compute
// exactly what those ops computed.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/common/cpu_features.h"
#include "ops/elementwise/vector_math.h"
#include "tests/ops/elementwise_test_util.h"

namespace attune::elementwise {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<float> SwishInputs() {
  std::vector<float> x;
  for (int i = -4000; i <= 4000; ++i) x.push_back(static_cast<float>(i) * 0.01f);
  for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 65537) x.push_back(std::bit_cast<float>(uint32_t(bits)));
  for (float e : {0.0f, kInf, kNaN, std::numeric_limits<float>::max(), std::numeric_limits<float>::denorm_min(),
                  1e30f, 88.0f, 104.0f})
    for (float s : {1.0f, -1.0f}) x.push_back(s * e);
  x.push_back(0.25f);  // a tail after the last whole vector
  return x;
}

bool SameBits(float a, float b) {
  return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
}

TEST(VectorSwish, IsMulSigmoidMulOnEveryIsa) {
  const std::vector<float> x = SwishInputs();
  const int64_t n = static_cast<int64_t>(x.size());
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    const VectorMathKernels& k = VectorMathKernelsFor(isa);
    for (float alpha : {1.0f, 1.702f, 0.5f, -2.0f, 0.0f}) {
      std::vector<float> scaled(x.size()), gate(x.size()), got(x.size());
      for (size_t i = 0; i < x.size(); ++i) scaled[i] = alpha == 1.0f ? x[i] : x[i] * alpha;
      k.unary[static_cast<int>(VectorOp::kSigmoid)](scaled.data(), gate.data(), n);
      k.swish(x.data(), got.data(), n, alpha);
      int mismatches = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        const float want = x[i] * gate[i];
        if (!SameBits(got[i], want) && ++mismatches <= 5)
          ADD_FAILURE() << k.name << " alpha " << alpha << ": x = " << x[i] << " gives " << got[i] << ", want "
                        << want;
      }
      EXPECT_EQ(mismatches, 0) << k.name << " alpha " << alpha;
    }
  }
}

// The op through the registry at opset 17 (before ONNX had it), float32 and
// float16, against the three ops it replaces.
TEST(SwishOp, EqualsTheChainItReplaces) {
  std::vector<float> x;
  for (int i = -300; i <= 300; ++i) x.push_back(static_cast<float>(i) * 0.07f);
  for (float e : {kInf, -kInf, kNaN, 0.0f, -0.0f, 6e4f, -6e4f}) x.push_back(e);
  const int64_t n = static_cast<int64_t>(x.size());
  for (bool half : {false, true}) {
    for (float alpha : {1.0f, 1.702f}) {
      const Tensor in = half ? testing::MakeHalf({n}, x) : testing::Make<float>({n}, x);
      const Tensor a = half ? testing::MakeHalf({}, {alpha}) : testing::Make<float>({}, {alpha});
      // The attribute holds the constant's value, as the fusion writes it.
      const float attr = half ? HalfToFloat(FloatToHalf(alpha)) : alpha;
      auto got = testing::RunOp("Swish", {in}, 17, testing::Attrs({{"alpha", attr}}));
      ASSERT_TRUE(got.ok()) << got.status();
      Tensor scaled = in;
      if (alpha != 1.0f) {
        auto s = testing::RunOp("Mul", {in, a}, 17);
        ASSERT_TRUE(s.ok());
        scaled = *s;
      }
      auto gate = testing::RunOp("Sigmoid", {scaled}, 17);
      ASSERT_TRUE(gate.ok());
      auto want = testing::RunOp("Mul", {in, *gate}, 17);
      ASSERT_TRUE(want.ok());
      const std::vector<float> g = half ? testing::HalfValues(*got) : testing::Values<float>(*got);
      const std::vector<float> w = half ? testing::HalfValues(*want) : testing::Values<float>(*want);
      for (int64_t i = 0; i < n; ++i)
        EXPECT_TRUE(SameBits(g[i], w[i])) << (half ? "float16" : "float32") << " alpha " << alpha << " x = " << x[i]
                                          << ": " << g[i] << " vs " << w[i];
    }
  }
}

}  // namespace
}  // namespace attune::elementwise
