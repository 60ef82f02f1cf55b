#include "ops/common/half_convert.h"

#include <string_view>

#include "attune/element_type.h"
#include "ops/common/cpu_features.h"
#include "ops/common/parallel.h"

namespace attune {
namespace {

// Elements per thread below which splitting costs more than it saves.
constexpr int64_t kConvertGrain = int64_t{1} << 15;

void WidenHalfPortable(const uint16_t* src, int64_t count, float* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = HalfToFloat(Float16{src[i]});
}

void NarrowToHalfPortable(const float* src, int64_t count, uint16_t* dst) {
  for (int64_t i = 0; i < count; ++i) dst[i] = FloatToHalf(src[i]).bits;
}

}  // namespace

const std::vector<HalfConvertSet>& AvailableHalfConverts() {
  static const std::vector<HalfConvertSet> sets = [] {
    std::vector<HalfConvertSet> s = {{IsaName(Isa::kGeneric), WidenHalfPortable, NarrowToHalfPortable}};
    if (IsaSupported(Isa::kAvx2)) s.push_back({IsaName(Isa::kAvx2), WidenHalfAvx2, NarrowToHalfAvx2});
    if (IsaSupported(Isa::kAvx512)) s.push_back({IsaName(Isa::kAvx512), WidenHalfAvx512, NarrowToHalfAvx512});
    return s;
  }();
  return sets;
}

const HalfConvertSet& SelectedHalfConvert() {
  const std::vector<HalfConvertSet>& all = AvailableHalfConverts();
  const std::string_view want = IsaName(ActiveIsa());
  for (const HalfConvertSet& s : all)
    if (want == s.name) return s;
  return all[0];
}

void WidenHalf(const uint16_t* src, int64_t count, float* dst, int threads) {
  const WidenHalfFn widen = SelectedHalfConvert().widen;
  ParallelForRange(count, kConvertGrain, threads, [&](int64_t b, int64_t e) { widen(src + b, e - b, dst + b); });
}

void NarrowToHalf(const float* src, int64_t count, uint16_t* dst, int threads) {
  const NarrowToHalfFn narrow = SelectedHalfConvert().narrow;
  ParallelForRange(count, kConvertGrain, threads, [&](int64_t b, int64_t e) { narrow(src + b, e - b, dst + b); });
}

}  // namespace attune
