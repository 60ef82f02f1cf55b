// The weight GEMVs against a double-precision loop: both variants (generic and
// ymm, forced through the ISA switch), layouts with whole and partial K blocks and
// panels, unblocked K, one to sixteen rows, with and without bias; the same
// product on one and two threads is bitwise equal; a plain row-major matrix
// read in place; and oneDNN's packed or in-place weights at one to sixteen rows
// (which take the GEMV) agree with more rows (which do not); the transposed
// GEMV (B stored [N, K]) in both variants. Every row of an M-row product is
// bitwise the row computed alone (the contract continuous batching relies on).
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ops/common/cpu_features.h"
#include "ops/matmul/gemm_rows.h"
#include "ops/matmul/gemv_transposed.h"
#include "ops/matmul/gemv_weights.h"
#include "ops/matmul/onednn_matmul.h"
#include "tests/common/pattern_values.h"

namespace attune {
namespace {

using testing::PatternValue;
using testing::PatternValues;

// Packs a row-major K × N matrix into `layout`, padding with a value that
// would show up in any output it leaked into.
std::vector<float> Pack(const std::vector<float>& plain, const PanelLayout& layout) {
  const int64_t blocks = (layout.k + layout.block_rows - 1) / layout.block_rows;
  std::vector<float> packed(layout.panels() * layout.panel_stride, 1e6f);
  for (int64_t p = 0; p < layout.panels(); ++p)
    for (int64_t b = 0; b < blocks; ++b)
      for (int64_t r = 0; r < layout.block_rows; ++r)
        for (int64_t j = 0; j < layout.panel_cols; ++j) {
          const int64_t k = b * layout.block_rows + r, n = p * layout.panel_cols + j;
          float& slot = packed[p * layout.panel_stride + b * layout.block_stride + r * layout.panel_cols + j];
          slot = k < layout.k ? (n < layout.n ? plain[k * layout.n + n] : 0.0f) : 1e6f;
        }
  return packed;
}

PanelLayout Layout(int64_t k, int64_t n, int64_t cols, int64_t block_rows) {
  PanelLayout l;
  l.k = k;
  l.n = n;
  l.panel_cols = cols;
  l.block_rows = block_rows;
  l.block_stride = block_rows * cols;
  l.panel_stride = (k + block_rows - 1) / block_rows * l.block_stride;
  return l;
}

class IsaScope {
 public:
  explicit IsaScope(Isa isa) { SetForcedIsa(isa); }
  ~IsaScope() { SetForcedIsa(std::nullopt); }
};

TEST(GemvPanels, EveryVariantMatchesReference) {
  struct Case {
    int64_t k, n, cols, block_rows;
  };
  const Case cases[] = {{768, 256, 64, 16}, {100, 37, 64, 16}, {17, 130, 64, 16}, {5, 64, 64, 1},
                        {33, 50, 16, 4},    {1, 1, 64, 16},    {64, 200, 48, 8}};
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2}) {
    if (!IsaSupported(isa)) continue;
    IsaScope scope(isa);
    for (const Case& cs : cases) {
      const PanelLayout layout = Layout(cs.k, cs.n, cs.cols, cs.block_rows);
      std::vector<float> w(cs.k * cs.n), bias(cs.n);
      for (int64_t i = 0; i < cs.k * cs.n; ++i) w[i] = PatternValue(i, 1);
      for (int64_t j = 0; j < cs.n; ++j) bias[j] = PatternValue(j, 2);
      const std::vector<float> packed = Pack(w, layout);
      for (int64_t m = 1; m <= kGemvMaxRowsOfA; ++m)
        for (bool with_bias : {false, true}) {
          std::vector<float> a(m * cs.k);
          for (int64_t i = 0; i < m * cs.k; ++i) a[i] = PatternValue(i, 3 + m);
          std::vector<float> c1(m * cs.n, NAN), c2(m * cs.n, NAN);
          const float* b = with_bias ? bias.data() : nullptr;
          GemvPanels(layout, packed.data(), a.data(), m, b, c1.data(), 1);
          GemvPanels(layout, packed.data(), a.data(), m, b, c2.data(), 2);
          for (int64_t r = 0; r < m; ++r)
            for (int64_t j = 0; j < cs.n; ++j) {
              double want = with_bias ? bias[j] : 0.0;
              for (int64_t p = 0; p < cs.k; ++p) want += static_cast<double>(a[r * cs.k + p]) * w[p * cs.n + j];
              ASSERT_NEAR(c1[r * cs.n + j], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(cs.k))))
                  << IsaName(isa) << " k " << cs.k << " n " << cs.n << " m " << m << " row " << r << " col " << j;
              ASSERT_EQ(c1[r * cs.n + j], c2[r * cs.n + j]) << IsaName(isa) << " threads differ at col " << j;
            }
        }
    }
  }
}

TEST(GemvPanels, RowMajorMatrixInPlace) {
  // No padding: the last panel's missing columns must never be read, which
  // the sanitizer build checks by placing the matrix at the end of its buffer.
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2}) {
    if (!IsaSupported(isa)) continue;
    IsaScope scope(isa);
    for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 200}, {3, 1}, {64, 64}, {19, 130}, {9, 2500}, {6, 1031}, {1000, 77}, {130, 33}}) {
      std::vector<float> w(k * n), bias(n);
      for (int64_t i = 0; i < k * n; ++i) w[i] = PatternValue(i, 8);
      for (int64_t j = 0; j < n; ++j) bias[j] = PatternValue(j, 9);
      for (int64_t m = 1; m <= kGemvMaxRowsOfA; ++m) {
        std::vector<float> a(m * k), c(m * n, NAN), c1(m * n, NAN);
        for (int64_t i = 0; i < m * k; ++i) a[i] = PatternValue(i, 10 + m);
        GemvRowMajor(w.data(), k, n, a.data(), m, bias.data(), c.data(), 2);
        GemvRowMajor(w.data(), k, n, a.data(), m, bias.data(), c1.data(), 1);
        for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(c[i], c1[i]) << IsaName(isa) << " threads differ at " << i;
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double want = bias[j];
            for (int64_t p = 0; p < k; ++p) want += static_cast<double>(a[r * k + p]) * w[p * n + j];
            ASSERT_NEAR(c[r * n + j], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(k))))
                << IsaName(isa) << " k " << k << " n " << n << " m " << m << " row " << r << " col " << j;
          }
      }
    }
  }
}

TEST(GemvTransposed, EveryVariantMatchesReference) {
  // B is [N, K] (a tied embedding read as the lm_head): K with and without a
  // tail past the 16-float steps, N with and without a tail past 4 equal parts.
  // AVX2 reads four streams, AVX-512 adjacent rows.
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    IsaScope scope(isa);
    for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 1031}, {1, 5}, {16, 4}, {19, 3}, {33, 600}, {100, 257}}) {
      std::vector<float> b(n * k);
      for (int64_t i = 0; i < n * k; ++i) b[i] = PatternValue(i, 4);
      for (int64_t m = 1; m <= kGemvMaxRowsOfA; ++m) {
        std::vector<float> a(m * k), c1(m * n, NAN), c2(m * n, NAN);
        for (int64_t i = 0; i < m * k; ++i) a[i] = PatternValue(i, 5 + m);
        GemvTransposed(a.data(), b.data(), c1.data(), m, k, n, 1);
        GemvTransposed(a.data(), b.data(), c2.data(), m, k, n, 2);
        for (int64_t r = 0; r < m; ++r)
          for (int64_t j = 0; j < n; ++j) {
            double want = 0.0;
            for (int64_t p = 0; p < k; ++p) want += static_cast<double>(a[r * k + p]) * b[j * k + p];
            ASSERT_NEAR(c1[r * n + j], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(k))))
                << IsaName(isa) << " k " << k << " n " << n << " m " << m << " row " << r << " col " << j;
            ASSERT_EQ(c1[r * n + j], c2[r * n + j]) << IsaName(isa) << " threads differ at col " << j;
          }
      }
    }
  }
}

TEST(GemvPanels, PackedOneDnnWeightsAgreeAcrossRowCounts) {
  // Rows 1..16 take the GEMV where oneDNN packs into panels; more rows take
  // oneDNN. Each row's result must not depend on which path ran.
  for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 2304}, {100, 37}, {3072, 130}}) {
    std::vector<float> w(k * n), bias(n);
    for (int64_t i = 0; i < k * n; ++i) w[i] = PatternValue(i, 5);
    for (int64_t j = 0; j < n; ++j) bias[j] = PatternValue(j, 6);
    for (bool in_place : {false, true}) {
    OneDnnConstantMatMul::Options options;
    options.bias = bias.data();
    options.alpha = in_place ? 1.0f : 0.5f;  // alpha 1 keeps the weights in place
    options.in_place = in_place;
    const double alpha = options.alpha;
    auto packed = OneDnnConstantMatMul::Create(w.data(), k, n, options);
    ASSERT_TRUE(packed.ok()) << packed.status();
    ASSERT_EQ((*packed)->in_place(), in_place);
    constexpr int64_t kRows = kGemvMaxRowsOfA + 2;
    std::vector<float> a(kRows * k);
    for (int64_t i = 0; i < kRows * k; ++i) a[i] = PatternValue(i, 7);
    std::vector<float> all(kRows * n);
    ASSERT_TRUE((*packed)->Run(a.data(), kRows, all.data(), 1).ok());
    for (int64_t m = 1; m <= kGemvMaxRowsOfA; ++m) {
      std::vector<float> few(m * n, NAN);
      ASSERT_TRUE((*packed)->Run(a.data(), m, few.data(), 2).ok());
      for (int64_t i = 0; i < m * n; ++i) {
        double want = bias[i % n];
        for (int64_t p = 0; p < k; ++p) want += alpha * a[(i / n) * k + p] * w[p * n + i % n];
        ASSERT_NEAR(few[i], want, 1e-3) << "k " << k << " n " << n << " m " << m << " at " << i;
        ASSERT_NEAR(few[i], all[i], 1e-3) << "k " << k << " n " << n << " m " << m << " at " << i;
      }
    }
    }
  }
}

// Each row of `many` (m rows of n) equals, bit for bit, the row computed
// alone by `one(row, out)`.
template <typename One>
void ExpectRowsAsAlone(const std::vector<float>& many, int64_t m, int64_t n, const One& one, const std::string& what) {
  std::vector<float> alone(n);
  for (int64_t r = 0; r < m; ++r) {
    std::fill(alone.begin(), alone.end(), NAN);
    one(r, alone.data());
    for (int64_t j = 0; j < n; ++j)
      ASSERT_EQ(many[r * n + j], alone[j]) << what << " m " << m << " row " << r << " col " << j;
  }
}

TEST(GemvWeights, EveryRowOfManyIsTheRowAlone) {
  // Panels (whole and partial, padded or not), row-major in place, and
  // transposed, on every variant, for every row count the GEMVs take: the
  // tiles that serve many rows compute each output as one row does.
  for (Isa isa : {Isa::kGeneric, Isa::kAvx2, Isa::kAvx512}) {
    if (!IsaSupported(isa)) continue;
    IsaScope scope(isa);
    for (auto [k, n] : {std::pair<int64_t, int64_t>{768, 300}, {37, 130}, {19, 64}, {5, 17}}) {
      std::vector<float> w(k * n), bias(n);
      for (int64_t i = 0; i < k * n; ++i) w[i] = PatternValue(i, 21);
      for (int64_t j = 0; j < n; ++j) bias[j] = PatternValue(j, 22);
      PanelLayout layout = Layout(k, n, 64, 16);
      layout.padded = true;
      const std::vector<float> packed = Pack(w, layout);
      PanelLayout unpadded = layout;
      unpadded.padded = false;
      for (int64_t m = 2; m <= kGemvMaxRowsOfA; ++m) {
        std::vector<float> a(m * k), c(m * n, NAN);
        for (int64_t i = 0; i < m * k; ++i) a[i] = PatternValue(i, 23 + m);
        for (const PanelLayout* l : {&layout, &unpadded}) {
          GemvPanels(*l, packed.data(), a.data(), m, bias.data(), c.data(), 2);
          ExpectRowsAsAlone(c, m, n, [&](int64_t r, float* out) {
            GemvPanels(*l, packed.data(), a.data() + r * k, 1, bias.data(), out, 1);
          }, std::string("panels ") + IsaName(isa));
        }
        GemvRowMajor(w.data(), k, n, a.data(), m, bias.data(), c.data(), 2);
        ExpectRowsAsAlone(c, m, n, [&](int64_t r, float* out) {
          GemvRowMajor(w.data(), k, n, a.data() + r * k, 1, bias.data(), out, 1);
        }, std::string("row-major ") + IsaName(isa));
        // B = w read as [n', k'] = [k, n]: n' = k rows of n.
        std::vector<float> at(m * n), ct(m * k, NAN);
        for (int64_t i = 0; i < m * n; ++i) at[i] = PatternValue(i, 40 + m);
        GemvTransposed(at.data(), w.data(), ct.data(), m, n, k, 2);
        ExpectRowsAsAlone(ct, m, k, [&](int64_t r, float* out) {
          GemvTransposed(at.data() + r * n, w.data(), out, 1, n, k, 1);
        }, std::string("transposed ") + IsaName(isa) + " k " + std::to_string(n));
      }
    }
  }
}

TEST(OneDnnConstantMatMul, RowsUpToTheGemvLimitAreTheRowAlone) {
  // Through the kernel's entry point: packed (alpha 0.5) on AVX-512 machines
  // (whose zmm tiles take up to 16 rows; elsewhere oneDNN takes 5 and more)
  // and in place where no row GEMM of our own takes 5 rows and more (AVX2
  // machines run it).
  const int64_t k = 768, n = 2304;
  std::vector<float> w(k * n), bias(n);
  for (int64_t i = 0; i < k * n; ++i) w[i] = PatternValue(i, 31);
  for (int64_t j = 0; j < n; ++j) bias[j] = PatternValue(j, 32);
  for (bool in_place : {false, true}) {
    if (in_place ? GemmRowsInPlaceAvailable() : ActiveIsa() != Isa::kAvx512) continue;
    OneDnnConstantMatMul::Options options;
    options.bias = bias.data();
    options.alpha = in_place ? 1.0f : 0.5f;
    options.in_place = in_place;
    auto weights = OneDnnConstantMatMul::Create(w.data(), k, n, options);
    ASSERT_TRUE(weights.ok()) << weights.status();
    for (int64_t m : {int64_t{5}, int64_t{8}, int64_t{13}, kGemvMaxRowsOfA}) {
      std::vector<float> a(m * k), c(m * n, NAN);
      for (int64_t i = 0; i < m * k; ++i) a[i] = PatternValue(i, 33);
      ASSERT_TRUE((*weights)->Run(a.data(), m, c.data(), 2).ok());
      ExpectRowsAsAlone(c, m, n, [&](int64_t r, float* out) {
        ASSERT_TRUE((*weights)->Run(a.data() + r * k, 1, out, 1).ok());
      }, in_place ? "in place" : "packed");
    }
  }
}

TEST(OneDnnConstantMatMul, InPlaceWeightsWhoseRowsCrowdL1SetsAreReorderedForManyRows) {
  // N = 1024 and 3072 floats put rows a multiple of 4 KiB apart, 1536 a
  // multiple of 2 KiB, and 2048 x 1630 is beyond the caches (repacked in
  // blocks of 512 columns, the last of 94 in a padded panel): products of 32
  // rows and more read a repacked copy, fewer read the weights in place (as
  // 33 x 2304 always does), and both give the reference product.
  for (auto [k, n] : {std::pair<int64_t, int64_t>{40, 1024}, {17, 3072}, {9, 1536}, {33, 2304}, {2048, 1630}}) {
    std::vector<float> w(k * n), bias(n);
    for (int64_t i = 0; i < k * n; ++i) w[i] = PatternValue(i, 12);
    for (int64_t j = 0; j < n; ++j) bias[j] = PatternValue(j, 13);
    OneDnnConstantMatMul::Options options;
    options.bias = bias.data();
    options.in_place = true;
    auto weights = OneDnnConstantMatMul::Create(w.data(), k, n, options);
    ASSERT_TRUE(weights.ok()) << weights.status();
    ASSERT_TRUE((*weights)->in_place());
    // oneDNN lays AVX-512 weights out in column panels, which the repacking
    // writes; 33 x 2304 (small, rows 1 KiB-aligned) is read in place.
    if (ActiveIsa() == Isa::kAvx512) EXPECT_EQ((*weights)->repack_columns() > 0, n != 2304) << k << " x " << n;
    if (k == 2048) EXPECT_EQ((*weights)->repack_columns() % 64, 0);
    for (int64_t m : {5, 31, 32, 70}) {
      if (k * n > 1000000 && m != 32) continue;  // the large case once, above the threshold
      std::vector<float> a(m * k), c(m * n, NAN);
      for (int64_t i = 0; i < m * k; ++i) a[i] = PatternValue(i, 14);
      ASSERT_TRUE((*weights)->Run(a.data(), m, c.data(), 2).ok());
      for (int64_t i = 0; i < m * n; ++i) {
        double want = bias[i % n];
        for (int64_t p = 0; p < k; ++p) want += static_cast<double>(a[(i / n) * k + p]) * w[p * n + i % n];
        ASSERT_NEAR(c[i], want, 1e-4 * (1.0 + std::sqrt(static_cast<double>(k)))) << "k " << k << " n " << n << " m " << m << " at " << i;
      }
    }
  }
}

}  // namespace
}  // namespace attune
