#include "ops/norm/normalize_rows.h"

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace attune {
namespace {

template <typename C, typename T>
inline C LoadAs(T v) {
  if constexpr (std::is_same_v<T, Float16>) return static_cast<C>(HalfToFloat(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return static_cast<C>(BFloat16ToFloat(v));
  else return static_cast<C>(v);
}

template <typename T, typename C>
inline T StoreAs(C v) {
  if constexpr (std::is_same_v<T, Float16>) return FloatToHalf(static_cast<float>(v));
  else if constexpr (std::is_same_v<T, BFloat16>) return FloatToBFloat16(static_cast<float>(v));
  else return static_cast<T>(v);
}

template <typename C>
void StoreStat(Tensor* out, int64_t row, C value) {
  if (out == nullptr) return;
  switch (out->type()) {
    case ElementType::kFloat32: out->data<float>()[row] = static_cast<float>(value); break;
    case ElementType::kFloat64: out->data<double>()[row] = static_cast<double>(value); break;
    case ElementType::kBFloat16: out->data<BFloat16>()[row] = FloatToBFloat16(static_cast<float>(value)); break;
    default: break;
  }
}

// The statistics of one row. The mean is held as shift + offset: `shift` is
// the plain average, `offset` the average of the residuals x - shift. On a row
// whose mean is large against its spread (mean 4000, std 0.1) the average is
// off by many ulps of the spread, and a mean rounded to C cannot resolve the
// spread either; x - shift is exact there (x and shift are within a factor of
// two), so (x - shift) - offset keeps the centred value to full precision.
template <typename C>
struct RowStats {
  C shift = 0, offset = 0, inv = 1;
};

// Two passes (corrected two-pass algorithm): the sum, then the residuals'
// sum and sum of squares; mean fixed at 0 for RMS.
template <typename C>
inline RowStats<C> RowStatistics(const C* x, int64_t n, bool subtract_mean, C epsilon) {
  RowStats<C> s;
  const C count = static_cast<C>(n);
  if (subtract_mean) {
    C sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < n; ++j) sum += x[j];
    s.shift = sum / count;
  }
  const C shift = s.shift;
  C residuals = 0, squares = 0;
#pragma omp simd reduction(+ : residuals, squares)
  for (int64_t j = 0; j < n; ++j) {
    const C d = x[j] - shift;
    residuals += d;
    squares += d * d;
  }
  if (subtract_mean) s.offset = residuals / count;
  // E[(x - shift)^2] - offset^2: the variance about the corrected mean (the
  // mean square for RMS, where shift and offset are 0).
  // Rounding can leave it a hair below 0; NaN passes through.
  C variance = squares / count - s.offset * s.offset;
  if (variance < 0) variance = 0;
  s.inv = C(1) / std::sqrt(variance + epsilon);
  return s;
}

// x + skip rounded to T, as the Add op computes it (narrow types in float).
template <typename T>
inline T AddAs(T a, T b) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return a + b;
  else return StoreAs<T>(LoadAs<float>(a) + LoadAs<float>(b));
}

template <typename T, typename C>
void Run(const NormalizeRowsJob& job) {
  const T* skip = job.skip != nullptr ? job.skip->data<T>() : nullptr;
  T* sum = job.sum != nullptr ? job.sum->data<T>() : nullptr;
  const int64_t skip_rows =
      skip != nullptr && job.features > 0 ? std::max<int64_t>(1, job.skip->num_elements() / job.features) : 1;
  const T* x = job.x->data<T>();
  T* y = job.y->data<T>();
  const int64_t n = job.features;
  const T* scale = static_cast<const T*>(job.scale->data());
  const T* bias = job.bias != nullptr ? static_cast<const T*>(job.bias->data()) : nullptr;
  const bool fast_params = job.scale->contiguous() && (job.bias == nullptr || job.bias->contiguous());
  const C epsilon = static_cast<C>(job.epsilon);
  // Threads only pay off once there is real work per call.
  const bool parallel = job.rows > 1 && job.rows * n >= 16384;

#pragma omp parallel num_threads(job.threads) if (parallel)
  {
    // Rows of another precision are widened into this buffer first, and
    // sums nobody reads are formed in the other.
    std::vector<C> widened(std::is_same_v<T, C> ? 0 : n);
    std::vector<T> summed(skip != nullptr && sum == nullptr ? n : 0);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < job.rows; ++r) {
      const T* xr = x + r * n;
      if (skip != nullptr) {
        T* sr = sum != nullptr ? sum + r * n : summed.data();
        const T* kr = skip + (r % skip_rows) * n;
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) sr[j] = AddAs<T>(xr[j], kr[j]);
        xr = sr;
      }
      const C* xc;
      if constexpr (std::is_same_v<T, C>) {
        xc = xr;
      } else {
        for (int64_t j = 0; j < n; ++j) widened[j] = LoadAs<C>(xr[j]);
        xc = widened.data();
      }
      const RowStats<C> stats = RowStatistics(xc, n, job.subtract_mean, epsilon);
      const C shift = stats.shift, offset = stats.offset, inv = stats.inv;
      StoreStat(job.mean, r, shift + offset);
      StoreStat(job.inv_std, r, inv);

      T* yr = y + r * n;
      const T* sr = scale + job.scale->RowOffset(r);
      const T* br = bias != nullptr ? bias + job.bias->RowOffset(r) : nullptr;
      if (fast_params && br != nullptr) {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j)
          yr[j] = StoreAs<T>(((xc[j] - shift) - offset) * inv * LoadAs<C>(sr[j]) + LoadAs<C>(br[j]));
      } else if (fast_params) {
#pragma omp simd
        for (int64_t j = 0; j < n; ++j) yr[j] = StoreAs<T>(((xc[j] - shift) - offset) * inv * LoadAs<C>(sr[j]));
      } else {
        for (int64_t j = 0; j < n; ++j) {
          const C s = LoadAs<C>(sr[job.scale->contiguous() ? j : job.scale->InnerOffset(j)]);
          const C b = br == nullptr ? C(0) : LoadAs<C>(br[job.bias->contiguous() ? j : job.bias->InnerOffset(j)]);
          yr[j] = StoreAs<T>(((xc[j] - shift) - offset) * inv * s + b);
        }
      }
    }
  }
}

template <typename T>
void RunIn(const NormalizeRowsJob& job) {
  if constexpr (std::is_same_v<T, double>) {
    Run<T, double>(job);
  } else {
    if (job.compute_in_double) Run<T, double>(job);
    else Run<T, float>(job);
  }
}

}  // namespace

absl::Status NormalizeRows(const NormalizeRowsJob& job) {
  if (job.rows == 0) return absl::OkStatus();
  switch (job.x->type()) {
    case ElementType::kFloat32: RunIn<float>(job); break;
    case ElementType::kFloat64: RunIn<double>(job); break;
    case ElementType::kFloat16: RunIn<Float16>(job); break;
    case ElementType::kBFloat16: RunIn<BFloat16>(job); break;
    default: return absl::InternalError("NormalizeRows: unexpected element type");
  }
  return absl::OkStatus();
}

}  // namespace attune
