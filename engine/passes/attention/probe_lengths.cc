#include "engine/passes/attention/probe_lengths.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "engine/pattern/constants.h"

namespace attune::attention {
namespace {

// Always probed, whatever the constants say.
constexpr int64_t kFixedLengths[] = {1, 2, 3, 7, 16};
// Integers this large are "to the end" sentinels (INT64_MAX, INT32_MAX,
// tf2onnx's 1e9 Slice ends), never a reachable length: a billion keys of one
// head's K alone are 256 GB at head size 64.
constexpr double kSentinel = 1e9;
// A constant with more elements is a buffer: its dims are lengths, and of
// its values only the extremes count.
constexpr int64_t kMaxParameterElements = 64;

bool IsIntegerType(ElementType t) {
  switch (t) {
    case ElementType::kUint8: case ElementType::kInt8: case ElementType::kUint16: case ElementType::kInt16:
    case ElementType::kInt32: case ElementType::kInt64: case ElementType::kUint32: case ElementType::kUint64:
      return true;
    default:
      return false;
  }
}

bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16 ||
         t == ElementType::kFloat64;
}

// Input `index` of `n` only picks, scales, clamps or moves values: a large
// float there is a fill (finfo.min, -1e4), not a position.
bool IsValueUse(const Node& n, int index) {
  const std::string& op = n.op_type();
  if (!n.domain().empty()) return false;
  if (op == "Where") return index == 1 || index == 2;
  if (op == "Mul" || op == "Max" || op == "Min" || op == "Cast" || op == "CastLike" || op == "Identity" ||
      op == "Concat" || op == "Transpose")
    return true;
  // The data input of the ops that move elements (a mask buffer's entries).
  static const char* kMovers[] = {"Expand", "Reshape", "Unsqueeze", "Squeeze", "Tile",
                                  "Flatten", "Slice", "Gather", "GatherElements", "Trilu"};
  for (const char* mover : kMovers)
    if (op == mover) return index == 0;
  return false;
}

class Collector {
 public:
  explicit Collector(int64_t cap) : cap_(cap) {}

  // One length-like number read by `where`; false when it is beyond the cap.
  bool Add(double v, const std::string& where) {
    if (!std::isfinite(v)) return true;
    const double a = std::fabs(v);
    // Lengths this large are unreachable whatever the type: an integer is a
    // "to the end" sentinel, a float a fill (finfo.min folded into a buffer).
    if (a >= kSentinel) return true;
    if (a > static_cast<double>(cap_)) {
      refusal_ = absl::StrCat("the mask's constant ", v, " (", where, ") is beyond the probe lengths' cap of ", cap_,
                              ": the mask cannot be proven at lengths that reach it");
      return false;
    }
    const int64_t c = static_cast<int64_t>(std::ceil(a));
    constants_.insert(c);
    return true;
  }

  bool AddTensor(const Tensor& t, const Node& reader, int index, bool value_use) {
    const std::string where = absl::StrCat("input ", index, " of ", reader.Describe());
    for (int64_t d : t.shape())
      if (!Add(static_cast<double>(d), where)) return false;
    const bool integer = IsIntegerType(t.type());
    if (!integer && !IsFloatType(t.type())) return true;  // bool: its dims are all there is
    auto values = pattern::TensorAsDoubles(t);
    if (!values || values->empty()) return true;
    std::vector<double> picked;
    if (static_cast<int64_t>(values->size()) <= kMaxParameterElements) {
      picked = *values;
    } else if (integer) {
      auto [lo, hi] = std::minmax_element(values->begin(), values->end());
      picked = {*lo, *hi};
    }  // a float buffer (0 / -inf / -1e4 entries): values, not positions
    for (double v : picked) {
      if (!integer && value_use && std::fabs(v) > static_cast<double>(cap_)) continue;  // a fill value
      if (!Add(v, where)) return false;
    }
    return true;
  }

  bool AddAttributes(const Node& n) {
    for (const auto& [name, value] : n.attributes().all()) {
      const std::string where = absl::StrCat("attribute ", name, " of ", n.Describe());
      if (const int64_t* i = std::get_if<int64_t>(&value)) {
        if (!Add(static_cast<double>(*i), where)) return false;
      } else if (const auto* list = std::get_if<std::vector<int64_t>>(&value)) {
        for (int64_t x : *list)
          if (!Add(static_cast<double>(x), where)) return false;
      }
    }
    return true;
  }

  const std::string& refusal() const { return refusal_; }
  const std::set<int64_t>& constants() const { return constants_; }

 private:
  int64_t cap_;
  std::set<int64_t> constants_;
  std::string refusal_;
};

}  // namespace

absl::StatusOr<ProbeLengths> ProbeLengthsOf(const ShapeSubgraph& cut, int64_t cap) {
  Collector collector(cap);
  const std::set<const Node*> inside(cut.nodes().begin(), cut.nodes().end());
  for (const Node* n : cut.nodes()) {
    if (!collector.AddAttributes(*n)) return absl::FailedPreconditionError(collector.refusal());
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Tensor* t = pattern::ConstantOf(n->input(i));
      if (t == nullptr) continue;
      // A float constant read anywhere as a position is a position everywhere.
      bool value_use = true;
      for (const Use& use : n->input(i)->uses())
        if (inside.count(use.node)) value_use = value_use && IsValueUse(*use.node, use.index);
      if (!collector.AddTensor(*t, *n, i, value_use)) return absl::FailedPreconditionError(collector.refusal());
    }
  }
  ProbeLengths out;
  std::set<int64_t> lengths(std::begin(kFixedLengths), std::end(kFixedLengths));
  for (int64_t c : collector.constants()) {
    out.longest_constant = std::max(out.longest_constant, c);
    for (int64_t l = c - 1; l <= c + 2; ++l)
      if (l >= 1) lengths.insert(l);
  }
  out.lengths.assign(lengths.begin(), lengths.end());
  return out;
}

}  // namespace attune::attention
