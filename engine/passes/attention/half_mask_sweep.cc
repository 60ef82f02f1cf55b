#include "engine/passes/attention/half_mask_sweep.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/ir/round_through_type.h"

namespace attune::attention {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Hidden keys whose score depends on s must stay this far below any score: a
// fill or floor at most -2^15 puts them 2^15 below the score they are added to.
constexpr float kHalfHidingLimit = -32768.0f;

const char* kClassNames[kHalfKeyClasses] = {"visible keys", "keys the causal part hides", "keys the padding hides",
                                            "keys both parts hide"};

bool IsBFloat16(ElementType type) { return type == ElementType::kBFloat16; }

float ToFloat(ElementType type, uint16_t bits) {
  return IsBFloat16(type) ? BFloat16ToFloat(BFloat16{bits}) : HalfToFloat(Float16{bits});
}

// The lowest finite value of the type: a visible key's floor must be at or below it.
float LowestOf(ElementType type) { return IsBFloat16(type) ? ToFloat(type, 0xff7f) : -65504.0f; }

// Every value of the type but NaN, as floats, in bit order.
const std::vector<float>& SweepValues(ElementType type) {
  auto build = [](ElementType t) {
    std::vector<float> v;
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
      const float x = ToFloat(t, static_cast<uint16_t>(bits));
      if (!std::isnan(x)) v.push_back(x);
    }
    return v;
  };
  static const std::vector<float> half = build(ElementType::kFloat16);
  static const std::vector<float> bfloat = build(ElementType::kBFloat16);
  return IsBFloat16(type) ? bfloat : half;
}

bool Same(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The function of one class, or a reason: the table `h` (one value per sweep
// value) as a constant, or as max(round(s + fill), floor).
std::optional<std::string> Fit(ElementType type, int c, const std::vector<float>& h, float& fill, bool& adds,
                               float& floor) {
  const std::vector<float>& s = SweepValues(type);
  const char* name = ElementTypeName(type);
  size_t zero = 0, neg_inf = 0;
  for (size_t v = 0; v < s.size(); ++v) {
    if (s[v] == 0.0f && !std::signbit(s[v])) zero = v;
    if (s[v] == -kInf) neg_inf = v;
  }
  bool constant = c != 0;
  for (size_t v = 0; v < s.size() && constant; ++v)
    if (s[v] != kInf) constant = Same(h[v], h[zero]);
  if (constant) {
    fill = h[zero];
    adds = false;
    floor = -kInf;
    return std::nullopt;
  }
  fill = h[zero];
  floor = h[neg_inf];
  adds = true;
  for (size_t v = 0; v < s.size(); ++v) {
    if (s[v] == kInf) continue;  // what +inf gives is the non-finite rules' question (hidden_nonfinite)
    const float want = std::max(RoundThroughType(type, s[v] + fill), floor);
    if (!Same(h[v], want))
      return absl::StrCat(kClassNames[c], " get ", h[v], " for the ", name, " score ", s[v], ", not max(", s[v],
                          " + ", fill, " rounded to ", name, ", ", floor, ") = ", want);
  }
  if (c == 0) {
    if (fill != 0.0f || floor > LowestOf(type))
      return absl::StrCat("visible keys get their ", name, " scores plus ", fill, " clamped at ", floor,
                          ", not the scores themselves");
    return std::nullopt;
  }
  if (fill > kHalfHidingLimit || floor > kHalfHidingLimit)
    return absl::StrCat(kClassNames[c], " get the ", name, " scores plus ", fill, " clamped at ", floor,
                        ", which the scores of visible keys may not stay above (the fused op needs -2^15 or less)");
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Tensor> HalfSweepScores(ElementType type, int64_t t, int64_t kv, int64_t max_bytes) {
  const std::vector<float>& values = SweepValues(type);
  const int64_t n = static_cast<int64_t>(values.size());
  ASSIGN_OR_RETURN(Tensor scores, Tensor::Create(type, {1, n, t, kv}, max_bytes));
  for (int64_t v = 0; v < n; ++v)
    for (int64_t e = 0; e < t * kv; ++e) {
      const int64_t at = v * t * kv + e;
      if (IsBFloat16(type)) {
        scores.data<BFloat16>()[at] = FloatToBFloat16(values[v]);
      } else {
        scores.data<Float16>()[at] = FloatToHalf(values[v]);
      }
    }
  return scores;
}

std::optional<std::string> ReadHalfSweep(ElementType type, const Tensor& out, int64_t batch,
                                         const std::function<int(int64_t b, int64_t i, int64_t j)>& class_of,
                                         HalfMaskFunctions& f) {
  const int64_t n = static_cast<int64_t>(SweepValues(type).size());
  const char* name = ElementTypeName(type);
  if (out.type() != type || out.rank() != 4 || out.shape()[1] != n ||
      (out.shape()[0] != 1 && out.shape()[0] != batch))
    return absl::StrCat("the mask steps give ", out.DebugString(), " for ", name, " scores of every value along the ",
                        "head axis, not ", name, " masked scores of one value per head");
  const int64_t lead = out.shape()[0], rows = out.shape()[2], cols = out.shape()[3];
  const uint16_t* data = static_cast<const uint16_t*>(out.raw_data());
  std::array<std::vector<float>, kHalfKeyClasses> table;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        const int c = class_of(b, i, j);
        std::vector<float>& t = table[c];
        const bool first = t.empty();
        if (first) t.resize(static_cast<size_t>(n));
        const int64_t lb = lead == 1 ? 0 : b;
        for (int64_t v = 0; v < n; ++v) {
          const float x = ToFloat(type, data[((lb * n + v) * rows + i) * cols + j]);
          if (first) {
            t[v] = x;
          } else if (!Same(t[v], x)) {
            return absl::StrCat(kClassNames[c], " get two values for one ", name, " score (", t[v], " and ", x,
                                " at batch ", b, " row ", i, " col ", j, ")");
          }
        }
      }
  for (int c = 0; c < kHalfKeyClasses; ++c) {
    if (table[c].empty()) continue;
    float fill = 0.0f, floor = 0.0f;
    bool adds = false;
    if (auto why = Fit(type, c, table[c], fill, adds, floor)) return why;
    if (!f.seen[c]) {
      f.seen[c] = true;
      f.fill[c] = fill;
      f.adds[c] = adds;
      f.floor[c] = floor;
    } else if (!Same(f.fill[c], fill) || f.adds[c] != adds || !Same(f.floor[c], floor)) {
      return absl::StrCat(kClassNames[c], " get another function of the ", name,
                          " score at another size or padding");
    }
  }
  return std::nullopt;
}

}  // namespace attune::attention
