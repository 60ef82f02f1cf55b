// The 16-bit scores of a subgraph that computes them in float16 or bfloat16, for the
// rows a fused op computes as that subgraph does (HiddenFills::half). Out of
// line in a portable translation unit: the float32 accumulation below must be
// the separate multiply and add of Attune's 16-bit MatMul (reference loop),
// never a fused multiply-add of an ISA build.
#include "core/ir/round_through_type.h"
#include "ops/attention/kernels/attention_mask.h"

namespace attune::attention {

float HalfScore(const AttentionArgs& a, int64_t b, int64_t h, int64_t i, int64_t j) {
  const float* q = RowOf(a.q, b, h, i);
  const float* k = RowOf(a.k, b, KvHeadOf(a, h), j);
  float acc = 0.0f;
  for (int64_t d = 0; d < a.head_dim; ++d) acc += q[d] * k[d];
  const ElementType type = a.hidden_fills.rounding;
  float s = RoundThroughType(type, acc);
  if (a.hidden_fills.divisor > 0.0f) {
    s = RoundThroughType(type, s / a.hidden_fills.divisor);
  } else if (a.scale != 1.0f) {
    s = RoundThroughType(type, s * a.scale);
  }
  return s;
}

}  // namespace attune::attention
