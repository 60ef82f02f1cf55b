#include "ops/quantize/integer_product.h"

#include <atomic>

#include "core/common/status_macros.h"
#include "ops/common/parallel.h"
#include "ops/quantize/integer_product_onednn.h"

namespace attune::quantize {
namespace {

std::atomic<bool> force_portable{false};

// Largest K for which |Σ (a − za)(b − zb)| ≤ K · 255 · 255 stays inside int32.
constexpr int64_t kMaxExactK = 33025;

int16_t Widen(const void* data, bool is_signed, int64_t i) {
  return is_signed ? static_cast<const int8_t*>(data)[i] : static_cast<const uint8_t*>(data)[i];
}

// b − zb widened to int16, [k, n].
std::vector<int16_t> WidenB(const void* b, bool b_signed, int64_t k, int64_t n, const std::vector<int32_t>& zps) {
  std::vector<int16_t> out(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const int32_t zp = zps.empty() ? 0 : zps[zps.size() == 1 ? 0 : c];
      out[r * n + c] = static_cast<int16_t>(Widen(b, b_signed, r * n + c) - zp);
    }
  return out;
}

// Accumulator type: int32 while the sum is provably inside it, else int64
// (then truncated to int32 as ONNX's int32 output wraps).
template <typename Acc>
void ProductRows(const IntegerRows& a, const int16_t* b, int64_t n, int32_t* out, int threads) {
  ParallelForRange(a.m, 1, threads, [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(static_cast<size_t>(n));
    std::vector<int16_t> row(static_cast<size_t>(a.k));
    for (int64_t m = begin; m < end; ++m) {
      const int32_t za = a.zero_point(m);
      for (int64_t kk = 0; kk < a.k; ++kk) row[kk] = static_cast<int16_t>(Widen(a.data, a.is_signed, m * a.k + kk) - za);
      std::fill(acc.begin(), acc.end(), Acc{0});
      for (int64_t kk = 0; kk < a.k; ++kk) {
        const Acc av = row[kk];
        const int16_t* brow = b + kk * n;
        for (int64_t c = 0; c < n; ++c) acc[c] += av * static_cast<Acc>(brow[c]);
      }
      for (int64_t c = 0; c < n; ++c) out[m * n + c] = static_cast<int32_t>(acc[c]);
    }
  });
}

void RunWidened(const IntegerRows& a, const int16_t* b, int64_t n, int32_t* out, int threads) {
  if (a.k <= kMaxExactK) ProductRows<int32_t>(a, b, n, out, threads);
  else ProductRows<int64_t>(a, b, n, out, threads);
}

class PortableProduct final : public IntegerProduct {
 public:
  PortableProduct(int64_t k, int64_t n, std::vector<int16_t> b) : IntegerProduct(k, n), b_(std::move(b)) {}
  absl::Status Run(const IntegerRows& a, int32_t* out, int threads) const override {
    RunWidened(a, b_.data(), n_, out, threads);
    return absl::OkStatus();
  }
  const char* path() const override { return "portable"; }

 private:
  std::vector<int16_t> b_;
};

}  // namespace

void IntegerProduct::ForcePortable(bool force) { force_portable.store(force); }

absl::StatusOr<std::unique_ptr<IntegerProduct>> IntegerProduct::Create(const void* b, bool b_signed, int64_t k,
                                                                      int64_t n, std::vector<int32_t> zero_points) {
  if (!force_portable.load() && k <= kMaxExactK) {
    ASSIGN_OR_RETURN(std::unique_ptr<IntegerProduct> fast, CreateOneDnnIntegerProduct(b, b_signed, k, n, zero_points));
    if (fast != nullptr) return fast;
  }
  return std::unique_ptr<IntegerProduct>(
      std::make_unique<PortableProduct>(k, n, WidenB(b, b_signed, k, n, zero_points)));
}

void PortableIntegerProduct(const IntegerRows& a, const void* b, bool b_signed, int64_t n,
                            const std::vector<int32_t>& b_zero_points, int32_t* out, int threads) {
  const std::vector<int16_t> wide = WidenB(b, b_signed, a.k, n, b_zero_points);
  RunWidened(a, wide.data(), n, out, threads);
}

}  // namespace attune::quantize
