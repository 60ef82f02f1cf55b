// Reads what a 16-bit mask chain does to every score of its type: the chain
// is evaluated once with scores that hold every float16 (or bfloat16) value
// but NaN along the head axis, and each class of key (visible, hidden by the
// causal part only, by the padding only, by both) must map a score s to one of
//   fill                       (Where, or s + fill that no s moves)
//   max(round(s + fill), floor) (an additive mask, then torch.max(w, min))
// for every finite s and for -inf (where float16 scores overflow), with
// visible keys kept as they are (max(s, floor) with floor at or below the
// type's lowest value). The fused op then computes a row whose every key is
// hidden as the subgraph does, in that type (AttentionArgs::score_rounding).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "attune/tensor.h"

namespace attune::attention {

/// Classes of keys: 0 visible, 1 hidden by the causal part only, 2 by the padding only, 3 by both.
inline constexpr int kHalfKeyClasses = 4;

/// What each class of key gets, as the sweeps read it.
struct HalfMaskFunctions {
  std::array<bool, kHalfKeyClasses> seen{};
  std::array<float, kHalfKeyClasses> fill{};   // the constant, or what is added to s
  std::array<bool, kHalfKeyClasses> adds{};    // max(half(s + fill), floor) rather than the constant
  std::array<float, kHalfKeyClasses> floor{};  // -inf without a clamp
};

/// Scores of `rank` 4 shaped (1, V, t, kv) of `type` (float16 or bfloat16):
/// slice v holds the v-th value of the type that is not NaN (every one, -inf
/// and +inf included).
absl::StatusOr<Tensor> HalfSweepScores(ElementType type, int64_t t, int64_t kv, int64_t max_bytes);

/// Reads one evaluation of the chain at HalfSweepScores(type): `out` is
/// (1 or batch, V, t, kv) of that type and class_of(b, i, j) gives each entry's
/// class. Records (or checks against earlier sweeps) every class's function in
/// `f`; a reason when a class maps one score to two values, or is not one of
/// the functions above.
std::optional<std::string> ReadHalfSweep(ElementType type, const Tensor& out, int64_t batch,
                                         const std::function<int(int64_t b, int64_t i, int64_t j)>& class_of,
                                         HalfMaskFunctions& f);

}  // namespace attune::attention
