// The int8 prefill product (accuracy_level 4, rows of A above the GEMV's)
// against a double-precision loop of its semantics: each row quantized per
// block by QuantizeRowInt8, Σ q_a · (q_w − zp) in exact integers, times
// scale_a · scale_w, summed over blocks. The kernel forms the integer sums
// exactly and adds fl(scale_a · scale_w) · dot in float32 in block order, so
// |y − reference| ≤ (k_blocks + 2) · 2^-24 · Σ_blocks |scale_a · scale_w · dot|.
// Also: its row quantizer gives QuantizeRowInt8's bytes; an output's bits do
// not depend on the number of rows, the thread count or the panel; rows with
// a NaN or an infinity take the float32 path and equal that row run alone.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/quantized/nbits_kernels.h"
#include "ops/quantized/nbits_prefill.h"
#include "ops/quantized/nbits_weights.h"
#include "tests/quantized/nbits_test_data.h"

namespace attune::quantized {
namespace {

const NBitsKernelSet* PrefillKernelSet() {
  for (const NBitsKernelSet& ks : AvailableNBitsKernels())
    if (ks.prefill_int8 != nullptr) return &ks;
  return nullptr;
}

std::vector<float> RandomRows(int64_t m, int64_t k, uint32_t seed) {
  std::vector<float> a;
  for (int64_t r = 0; r < m; ++r) {
    const std::vector<float> row = RandomRow(k, seed + static_cast<uint32_t>(r));
    a.insert(a.end(), row.begin(), row.end());
  }
  return a;
}

struct Case {
  int64_t k, n, bits, block;
  ZeroPoints zps;
};

// Ragged K (a last partial block) and N (a last partial panel and tile).
const Case kCases[] = {
    {256, 100, 4, 32, ZeroPoints::kNone},  {200, 53, 4, 32, ZeroPoints::kPacked}, {384, 49, 4, 128, ZeroPoints::kPacked},
    {160, 30, 8, 32, ZeroPoints::kNone},   {330, 7, 8, 64, ZeroPoints::kPacked},  {1000, 97, 4, 64, ZeroPoints::kNone},
};

std::string Label(const Case& c, int64_t m) {
  return "K=" + std::to_string(c.k) + " N=" + std::to_string(c.n) + " bits=" + std::to_string(c.bits) +
         " block=" + std::to_string(c.block) + " zp=" + std::to_string(static_cast<int>(c.zps)) +
         " M=" + std::to_string(m);
}

// The int8 semantics of one output, Σ |terms| and the error bound of a float32 sum of its blocks.
void Reference(const Data& d, const float* a, int64_t j, double* want, double* bound, double* magnitude_out = nullptr) {
  const int64_t k = d.params.k, bs = d.params.block_size, kb = d.params.k_blocks();
  std::vector<int8_t> q(kb * bs);
  std::vector<float> qs(kb);
  std::vector<int32_t> sums(kb);
  ASSERT_TRUE(QuantizeRowInt8(a, k, bs, q.data(), qs.data(), sums.data()));
  double sum = 0, magnitude = 0;
  for (int64_t blk = 0; blk < kb; ++blk) {
    int64_t dot = 0;
    for (int64_t i = 0; i < bs && blk * bs + i < k; ++i)
      dot += q[blk * bs + i] * (static_cast<int64_t>(d.q[(j * kb + blk) * bs + i]) -
                                static_cast<int64_t>(d.zp[j * kb + blk]));
    const double term = static_cast<double>(qs[blk]) * d.scales.data<float>()[j * kb + blk] * dot;
    sum += term;
    magnitude += std::fabs(term);
  }
  *want = sum;
  *bound = (kb + 2) * std::ldexp(1.0, -24) * magnitude + 1e-30;
  if (magnitude_out != nullptr) *magnitude_out = magnitude;
}

TEST(NBitsPrefill, RowQuantizerGivesTheDecodeBytes) {
  const NBitsKernelSet* ks = PrefillKernelSet();
  if (ks == nullptr) GTEST_SKIP() << "no AVX-512 VNNI";
  for (int64_t k : {64, 200, 333})
    for (int64_t bs : {32, 128}) {
      Data d = MakeData(k, 1, 4, bs, ZeroPoints::kNone, 3);
      auto w = NBitsWeights::Create(d.params, "test", d.b, d.scales, d.zero_points);
      ASSERT_TRUE(w.ok());
      const int64_t m = 19, kb = d.params.k_blocks();
      std::vector<float> a = RandomRows(m, k, 40);
      for (int64_t i = 0; i < bs && i < k; ++i) a[5 * k + i] = 0.0f;  // an all-zero block
      a[7 * k + 3] = 1e30f;
      PackedInt8Rows packed;
      packed.Resize(m, (*w)->view());
      for (int64_t r = 0; r < m; ++r) {
        ASSERT_TRUE(ks->prefill_int8->pack_row(a.data() + r * k, (*w)->view(), r, packed));
        std::vector<int8_t> q(kb * bs);
        std::vector<float> qs(kb);
        std::vector<int32_t> sums(kb);
        ASSERT_TRUE(QuantizeRowInt8(a.data() + r * k, k, bs, q.data(), qs.data(), sums.data()));
        const int64_t g = r / 16, lane = r % 16;
        for (int64_t i = 0; i < kb * bs; ++i)
          ASSERT_EQ(static_cast<uint8_t>(q[i] + 128), packed.q[(g * packed.quads + i / 4) * 64 + lane * 4 + i % 4])
              << "k=" << k << " row " << r << " at " << i;
        for (int64_t blk = 0; blk < kb; ++blk) {
          EXPECT_EQ(qs[blk], packed.scale[(g * kb + blk) * 16 + lane]);
          EXPECT_EQ(sums[blk], packed.sum[(g * kb + blk) * 16 + lane]);
        }
      }
      a[2 * k + k - 1] = std::numeric_limits<float>::quiet_NaN();
      a[3 * k] = -std::numeric_limits<float>::infinity();
      EXPECT_FALSE(ks->prefill_int8->pack_row(a.data() + 2 * k, (*w)->view(), 2, packed));
      EXPECT_FALSE(ks->prefill_int8->pack_row(a.data() + 3 * k, (*w)->view(), 3, packed));
    }
}

TEST(NBitsPrefill, MatchesIntegerReferenceAndIsInvariant) {
  const NBitsKernelSet* ks = PrefillKernelSet();
  if (ks == nullptr) GTEST_SKIP() << "no AVX-512 VNNI";
  for (const Case& c : kCases) {
    Data d = MakeData(c.k, c.n, c.bits, c.block, c.zps, 9);
    d.params.accuracy_level = 4;
    auto w = NBitsWeights::Create(d.params, "test", d.b, d.scales, d.zero_points);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE(ks->prefill_int8->supports((*w)->view()));
    const std::vector<float> bias = RandomRow(c.n, 77);
    const std::vector<float> a = RandomRows(130, c.k, 100);
    std::vector<float> y130(130 * c.n);
    ASSERT_TRUE((*w)->Multiply(*ks, a.data(), 130, bias.data(), y130.data(), 2).ok());
    for (int64_t m : {17, 64, 128, 130}) {
      std::vector<float> y1(m * c.n), y2(m * c.n);
      ASSERT_TRUE((*w)->Multiply(*ks, a.data(), m, bias.data(), y1.data(), 1).ok());
      ASSERT_TRUE((*w)->Multiply(*ks, a.data(), m, bias.data(), y2.data(), 2).ok());
      EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * 4)) << "threads: " << Label(c, m);
      EXPECT_EQ(0, std::memcmp(y1.data(), y130.data(), y1.size() * 4)) << "rows: " << Label(c, m);
    }
    for (int64_t r = 0; r < 130; r += (r < 20 ? 1 : 7))
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0, bound = 0;
        Reference(d, a.data() + r * c.k, j, &want, &bound);
        // The bias is added after the sum: one more rounding.
        EXPECT_NEAR(want + bias[j], y130[r * c.n + j], bound + std::ldexp(std::fabs(want + bias[j]), -23))
            << Label(c, 130) << " row " << r << " col " << j;
      }
    // The decode path (one row) forms the same integer sums, adding them in another order and taking
    // the zero points off at the end: within its own tolerance (NBitsKernels.Int8Activations...).
    for (int64_t r : {0, 129}) {
      std::vector<float> y(c.n);
      ASSERT_TRUE((*w)->Multiply(*ks, a.data() + r * c.k, 1, bias.data(), y.data(), 1).ok());
      for (int64_t j = 0; j < c.n; ++j) {
        double want = 0, bound = 0, magnitude = 0;
        Reference(d, a.data() + r * c.k, j, &want, &bound, &magnitude);
        EXPECT_NEAR(y[j], y130[r * c.n + j], 1e-5 * magnitude + std::ldexp(std::fabs(want + bias[j]), -22))
            << "decode vs prefill " << Label(c, 130) << " row " << r;
      }
    }
  }
}

// A row with a NaN or an infinity takes the float32 GEMV, as it does alone
// (decode); the other rows keep their int8 bits.
TEST(NBitsPrefill, NonFiniteRowsTakeTheFloatPath) {
  const NBitsKernelSet* ks = PrefillKernelSet();
  if (ks == nullptr) GTEST_SKIP() << "no AVX-512 VNNI";
  Data d = MakeData(200, 53, 4, 32, ZeroPoints::kPacked, 5);
  d.params.accuracy_level = 4;
  auto w = NBitsWeights::Create(d.params, "test", d.b, d.scales, d.zero_points);
  ASSERT_TRUE(w.ok());
  const int64_t m = 40, k = 200, n = 53;
  std::vector<float> a = RandomRows(m, k, 300);
  std::vector<float> clean(m * n), y1(m * n), y2(m * n);
  ASSERT_TRUE((*w)->Multiply(*ks, a.data(), m, nullptr, clean.data(), 2).ok());
  a[3 * k + 10] = std::numeric_limits<float>::quiet_NaN();
  a[17 * k + 199] = std::numeric_limits<float>::infinity();
  a[33 * k + 0] = -std::numeric_limits<float>::infinity();
  ASSERT_TRUE((*w)->Multiply(*ks, a.data(), m, nullptr, y1.data(), 1).ok());
  ASSERT_TRUE((*w)->Multiply(*ks, a.data(), m, nullptr, y2.data(), 2).ok());
  EXPECT_EQ(0, std::memcmp(y1.data(), y2.data(), y1.size() * 4));
  for (int64_t r = 0; r < m; ++r) {
    std::vector<float> alone(n);
    if (r == 3 || r == 17 || r == 33) {
      ASSERT_TRUE((*w)->Multiply(*ks, a.data() + r * k, 1, nullptr, alone.data(), 1).ok());
      for (int64_t j = 0; j < n; ++j) {
        EXPECT_FALSE(std::isfinite(y1[r * n + j])) << "row " << r << " col " << j;
        EXPECT_EQ(0, std::memcmp(&alone[j], &y1[r * n + j], 4)) << "row " << r << " col " << j;
      }
    } else {
      EXPECT_EQ(0, std::memcmp(clean.data() + r * n, y1.data() + r * n, n * 4)) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace attune::quantized
