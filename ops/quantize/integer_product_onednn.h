// The integer product through oneDNN's u8/s8 · s8 → s32 matmul, on CPUs with
// VNNI (where oneDNN's int8 kernels never saturate an intermediate sum).
#pragma once

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/quantize/integer_product.h"

namespace attune::quantize {

/// nullptr when this CPU has no VNNI (the caller uses the portable path).
absl::StatusOr<std::unique_ptr<IntegerProduct>> CreateOneDnnIntegerProduct(const void* b, bool b_signed, int64_t k,
                                                                          int64_t n,
                                                                          const std::vector<int32_t>& zero_points);

}  // namespace attune::quantize
