#include "ops/quantize/integer_matmul.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/parallel.h"
#include "ops/quantize/quantize_params.h"

namespace attune::quantize {
namespace {

bool IsInt8Type(ElementType t) { return t == ElementType::kInt8 || t == ElementType::kUint8; }

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Flat index into a batch of dims `own` (rank-aligned with `out`, 1 = broadcast).
int64_t BatchIndex(const std::vector<int64_t>& own, const std::vector<int64_t>& out, int64_t flat) {
  int64_t index = 0, stride = 1;
  for (size_t d = out.size(); d-- > 0;) {
    const int64_t coord = flat % out[d];
    flat /= out[d];
    if (own[d] != 1) index += coord * stride;
    stride *= own[d];
  }
  return index;
}

}  // namespace

absl::StatusOr<MatMulShape> PlanIntegerMatMul(const std::string& label, const Tensor& a, const Tensor& b) {
  if (!IsInt8Type(a.type()) || !IsInt8Type(b.type()))
    return absl::InvalidArgumentError(absl::StrCat(label, ": A has type ", ElementTypeName(a.type()), " and B ",
                                                   ElementTypeName(b.type()), "; both must be int8 or uint8"));
  auto s = PlanMatMul(label, a.shape(), b.shape());
  if (!s.ok()) return absl::InvalidArgumentError(std::string(s.status().message()));
  return s;
}

absl::StatusOr<std::vector<int32_t>> ReadZeroPoints(const std::string& label, const Tensor* zp, ElementType operand,
                                                    int64_t per_product, int64_t batches, const char* what) {
  if (zp == nullptr) return std::vector<int32_t>();
  if (zp->type() != operand)
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", what, " zero point has type ",
                                                   ElementTypeName(zp->type()), " but its operand has type ",
                                                   ElementTypeName(operand)));
  const int64_t n = zp->num_elements();
  if (n != 1 && n != per_product && n != per_product * batches)
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", what, " zero point has ", n,
                                                   " elements; expected 1 or ", per_product,
                                                   batches > 1 ? absl::StrCat(" or ", per_product * batches) : ""));
  return ReadIntegers(*zp, absl::StrCat(label, ": ", what, " zero point"));
}

absl::Status RunIntegerMatMul(const MatMulShape& s, const Tensor& a, const std::vector<int32_t>& a_zps, const Tensor& b,
                              const std::vector<int32_t>& b_zps, const IntegerProduct* prepared, int32_t* out,
                              int threads) {
  const int64_t products = s.out_batch.empty() ? 1 : Count(s.out_batch);
  const bool a_signed = a.type() == ElementType::kInt8, b_signed = b.type() == ElementType::kInt8;
  const auto* a_bytes = static_cast<const uint8_t*>(a.raw_data());
  const auto* b_bytes = static_cast<const uint8_t*>(b.raw_data());
  for (int64_t p = 0; p < products; ++p) {
    const int64_t ai = s.out_batch.empty() ? 0 : BatchIndex(s.a_batch, s.out_batch, p);
    const int64_t bi = s.out_batch.empty() ? 0 : BatchIndex(s.b_batch, s.out_batch, p);
    IntegerRows rows{a_bytes + ai * s.m * s.k, a_signed, s.m, s.k, nullptr, 0};
    if (!a_zps.empty()) {
      const bool per_batch = static_cast<int64_t>(a_zps.size()) == s.m * Count(s.a_batch) && a_zps.size() > 1 &&
                             static_cast<int64_t>(a_zps.size()) != s.m;
      rows.zero_points = a_zps.data() + (per_batch ? ai * s.m : 0);
      rows.zero_point_count = a_zps.size() == 1 ? 1 : s.m;
    }
    int32_t* c = out + p * s.m * s.n;
    if (prepared != nullptr) {
      RETURN_IF_ERROR(prepared->Run(rows, c, threads));
      continue;
    }
    std::vector<int32_t> zb;
    if (b_zps.size() <= 1 || static_cast<int64_t>(b_zps.size()) == s.n) zb = b_zps;
    else zb.assign(b_zps.begin() + bi * s.n, b_zps.begin() + (bi + 1) * s.n);
    PortableIntegerProduct(rows, b_bytes + bi * s.k * s.n, b_signed, s.n, zb, c, threads);
  }
  return absl::OkStatus();
}

void ScaleToFloat(const int32_t* acc, int64_t rows, int64_t n, float a_scale, const std::vector<float>& b_scales,
                  const float* bias, float* out, int threads) {
  std::vector<float> multiplier(static_cast<size_t>(n));
  for (int64_t c = 0; c < n; ++c) multiplier[c] = a_scale * b_scales[b_scales.size() == 1 ? 0 : c];
  ParallelForRange(rows, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(1, n)), threads,
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const int32_t* in = acc + r * n;
                       float* o = out + r * n;
                       // Two roundings, as Mul then Add: this file is compiled without FMA contraction.
                       for (int64_t c = 0; c < n; ++c) o[c] = static_cast<float>(in[c]) * multiplier[c];
                       if (bias != nullptr)
                         for (int64_t c = 0; c < n; ++c) o[c] = o[c] + bias[c];
                     }
                   });
}

}  // namespace attune::quantize
