#include "engine/passes/attention/half_mask_sweep.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::attention {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
// Hidden keys whose score depends on s must stay this far below any score: a
// fill or floor at most -2^15 puts them 2^15 below the score they are added to.
constexpr float kHalfHidingLimit = -32768.0f;
constexpr float kLowestHalf = -65504.0f;

const char* kClassNames[kHalfKeyClasses] = {"visible keys", "keys the causal part hides", "keys the padding hides",
                                            "keys both parts hide"};

// Every float16 value but NaN, as floats, in bit order.
const std::vector<float>& SweepValues() {
  static const std::vector<float> values = [] {
    std::vector<float> v;
    for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
      const float x = HalfToFloat(Float16{static_cast<uint16_t>(bits)});
      if (!std::isnan(x)) v.push_back(x);
    }
    return v;
  }();
  return values;
}

bool Same(float a, float b) { return a == b || (std::isnan(a) && std::isnan(b)); }

float RoundToHalf(float x) { return HalfToFloat(FloatToHalf(x)); }

// The function of one class, or a reason: the table `h` (one value per sweep
// value) as a constant, or as max(half(s + fill), floor).
std::optional<std::string> Fit(int c, const std::vector<float>& h, float& fill, bool& adds, float& floor) {
  const std::vector<float>& s = SweepValues();
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
    const float want = std::max(RoundToHalf(s[v] + fill), floor);
    if (!Same(h[v], want))
      return absl::StrCat(kClassNames[c], " get ", h[v], " for the float16 score ", s[v], ", not max(", s[v], " + ",
                          fill, " rounded to float16, ", floor, ") = ", want);
  }
  if (c == 0) {
    if (fill != 0.0f || floor > kLowestHalf)
      return absl::StrCat("visible keys get their float16 scores plus ", fill, " clamped at ", floor,
                          ", not the scores themselves");
    return std::nullopt;
  }
  if (fill > kHalfHidingLimit || floor > kHalfHidingLimit)
    return absl::StrCat(kClassNames[c], " get the float16 scores plus ", fill, " clamped at ", floor,
                        ", which the scores of visible keys may not stay above (the fused op needs -2^15 or less)");
  return std::nullopt;
}

}  // namespace

absl::StatusOr<Tensor> HalfSweepScores(int64_t t, int64_t kv, int64_t max_bytes) {
  const std::vector<float>& values = SweepValues();
  const int64_t n = static_cast<int64_t>(values.size());
  ASSIGN_OR_RETURN(Tensor scores, Tensor::Create(ElementType::kFloat16, {1, n, t, kv}, max_bytes));
  Float16* out = scores.data<Float16>();
  for (int64_t v = 0; v < n; ++v)
    for (int64_t e = 0; e < t * kv; ++e) out[v * t * kv + e] = FloatToHalf(values[v]);
  return scores;
}

std::optional<std::string> ReadHalfSweep(const Tensor& out, int64_t batch,
                                         const std::function<int(int64_t b, int64_t i, int64_t j)>& class_of,
                                         HalfMaskFunctions& f) {
  const int64_t n = static_cast<int64_t>(SweepValues().size());
  if (out.type() != ElementType::kFloat16 || out.rank() != 4 || out.shape()[1] != n ||
      (out.shape()[0] != 1 && out.shape()[0] != batch))
    return absl::StrCat("the mask steps give ", out.DebugString(), " for float16 scores of every value along the "
                        "head axis, not float16 masked scores of one value per head");
  const int64_t lead = out.shape()[0], rows = out.shape()[2], cols = out.shape()[3];
  const Float16* data = out.data<Float16>();
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
          const float x = HalfToFloat(data[((lb * n + v) * rows + i) * cols + j]);
          if (first) {
            t[v] = x;
          } else if (!Same(t[v], x)) {
            return absl::StrCat(kClassNames[c], " get two values for one float16 score (", t[v], " and ", x,
                                " at batch ", b, " row ", i, " col ", j, ")");
          }
        }
      }
  for (int c = 0; c < kHalfKeyClasses; ++c) {
    if (table[c].empty()) continue;
    float fill = 0.0f, floor = 0.0f;
    bool adds = false;
    if (auto why = Fit(c, table[c], fill, adds, floor)) return why;
    if (!f.seen[c]) {
      f.seen[c] = true;
      f.fill[c] = fill;
      f.adds[c] = adds;
      f.floor[c] = floor;
    } else if (!Same(f.fill[c], fill) || f.adds[c] != adds || !Same(f.floor[c], floor)) {
      return absl::StrCat(kClassNames[c], " get another function of the float16 score at another size or padding");
    }
  }
  return std::nullopt;
}

}  // namespace attune::attention
