#include "ops/attention/float_staging.h"

#include <algorithm>

namespace attune::attention {

bool IsStageableFloat(ElementType type) {
  return type == ElementType::kFloat32 || type == ElementType::kFloat16 || type == ElementType::kBFloat16;
}

absl::StatusOr<Tensor> StageAsFloat32(const KernelContext& ctx, const Tensor& t) {
  if (t.type() == ElementType::kFloat32) return t;
  absl::StatusOr<Tensor> out = ctx.AllocateScratch(ElementType::kFloat32, t.shape());
  if (!out.ok()) return out.status();
  float* dst = out->data<float>();
  const int64_t n = t.num_elements();
  if (t.type() == ElementType::kFloat16) {
    const Float16* src = t.data<Float16>();
    for (int64_t i = 0; i < n; ++i) dst[i] = HalfToFloat(src[i]);
  } else {
    const BFloat16* src = t.data<BFloat16>();
    for (int64_t i = 0; i < n; ++i) dst[i] = BFloat16ToFloat(src[i]);
  }
  return out;
}

void StoreFromFloat32(const float* src, Tensor& dst) {
  const int64_t n = dst.num_elements();
  switch (dst.type()) {
    case ElementType::kFloat32:
      if (dst.data<float>() != src) std::copy(src, src + n, dst.data<float>());
      break;
    case ElementType::kFloat16:
      for (int64_t i = 0; i < n; ++i) dst.data<Float16>()[i] = FloatToHalf(src[i]);
      break;
    default:
      for (int64_t i = 0; i < n; ++i) dst.data<BFloat16>()[i] = FloatToBFloat16(src[i]);
      break;
  }
}

}  // namespace attune::attention
