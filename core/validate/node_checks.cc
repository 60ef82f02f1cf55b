#include "core/validate/node_checks.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune::validate {
namespace {

constexpr int64_t kUnknownRank = -1;

int64_t RankOf(const Value* value) {
  if (value == nullptr || !value->shape().has_value()) return kUnknownRank;
  return static_cast<int64_t>(value->shape()->size());
}

absl::Status Invalid(const Node& node, std::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(node.Describe(), ": ", Sv(what)));
}

std::string RankText(const Node& node, int input, int64_t rank) {
  const Value* v = node.input(input);
  return absl::StrCat("input ", v != nullptr ? QuoteName(v->name()) : std::to_string(input), " of rank ", rank);
}

// A typed attribute with a default; a wrong type is the node's error.
absl::StatusOr<int64_t> IntAttribute(const Node& node, std::string_view name, int64_t default_value) {
  auto v = node.attributes().GetInt(name, default_value);
  if (!v.ok()) return Invalid(node, std::string(v.status().message()));
  return *v;
}

absl::StatusOr<int64_t> RequiredIntAttribute(const Node& node, std::string_view name) {
  if (!node.attributes().Has(name)) return Invalid(node, absl::StrCat("attribute ", Sv(name), " is missing"));
  return IntAttribute(node, name, 0);
}

// `axis` must lie in [-rank, rank), or [-rank, rank] with `end_inclusive`.
absl::Status CheckAxis(const Node& node, std::string_view attribute, int64_t axis, int input, int64_t rank,
                       bool end_inclusive = false) {
  if (rank == kUnknownRank) return absl::OkStatus();
  const int64_t end = end_inclusive ? rank + 1 : rank;
  if (axis >= -rank && axis < end) return absl::OkStatus();
  return Invalid(node, absl::StrCat("attribute ", Sv(attribute), " ", axis, " is out of range for ",
                                    RankText(node, input, rank)));
}

absl::Status CheckAxes(const Node& node, std::string_view attribute, const std::vector<int64_t>& axes, int input,
                       int64_t rank, bool unique) {
  if (rank == kUnknownRank) return absl::OkStatus();
  std::vector<bool> seen(rank, false);
  for (int64_t axis : axes) {
    RETURN_IF_ERROR(CheckAxis(node, attribute, axis, input, rank));
    const int64_t a = axis < 0 ? axis + rank : axis;
    if (unique && seen[a])
      return Invalid(node, absl::StrCat("attribute ", Sv(attribute), " [", absl::StrJoin(axes, ", "),
                                        "] names axis ", a, " twice"));
    seen[a] = true;
  }
  return absl::OkStatus();
}

// The axes of Squeeze, Unsqueeze and the reductions: an attribute before
// `input_since`, then input 1 (checked only when it is a constant).
absl::StatusOr<std::optional<std::vector<int64_t>>> AxesOf(const Node& node, int opset, int input_since) {
  if (opset < input_since) {
    if (!node.attributes().Has("axes")) return std::optional<std::vector<int64_t>>();
    auto axes = node.attributes().GetInts("axes");
    if (!axes.ok()) return Invalid(node, std::string(axes.status().message()));
    return std::optional<std::vector<int64_t>>(*axes);
  }
  const Value* in = node.input(1);
  if (in == nullptr || in->constant() == nullptr) return std::optional<std::vector<int64_t>>();
  const Tensor& t = *in->constant();
  std::vector<int64_t> axes;
  if (t.type() == ElementType::kInt64) {
    for (int64_t v : t.values<int64_t>()) axes.push_back(v);
  } else if (t.type() == ElementType::kInt32) {
    for (int32_t v : t.values<int32_t>()) axes.push_back(v);
  } else {
    return std::optional<std::vector<int64_t>>();  // the kernel names the type
  }
  return std::optional<std::vector<int64_t>>(std::move(axes));
}

absl::Status CheckTranspose(const Node& node, int) {
  if (!node.attributes().Has("perm")) return absl::OkStatus();
  auto perm = node.attributes().GetInts("perm");
  if (!perm.ok()) return Invalid(node, std::string(perm.status().message()));
  const int64_t n = static_cast<int64_t>(perm->size());
  const int64_t rank = RankOf(node.input(0));
  const std::string text = absl::StrCat("attribute perm [", absl::StrJoin(*perm, ", "), "]");
  if (rank != kUnknownRank && n != rank)
    return Invalid(node, absl::StrCat(text, " has ", n, " entries for ", RankText(node, 0, rank)));
  // Whatever the rank, a perm must be a permutation of 0 .. size - 1.
  std::vector<bool> seen(n, false);
  for (int64_t p : *perm) {
    if (p < 0 || p >= n || seen[p])
      return Invalid(node, absl::StrCat(text, " is not a permutation of 0..", n - 1));
    seen[p] = true;
  }
  return absl::OkStatus();
}

absl::Status CheckSoftmax(const Node& node, int opset) {
  ASSIGN_OR_RETURN(const int64_t axis, IntAttribute(node, "axis", opset < 13 ? 1 : -1));
  const int64_t rank = RankOf(node.input(0));
  // A scalar is treated as one element of rank 1, as the kernel does.
  return CheckAxis(node, "axis", axis, 0, rank == 0 ? 1 : rank);
}

absl::Status CheckAxisOfInput0(const Node& node, int64_t default_axis) {
  ASSIGN_OR_RETURN(const int64_t axis, IntAttribute(node, "axis", default_axis));
  return CheckAxis(node, "axis", axis, 0, RankOf(node.input(0)));
}

absl::Status CheckConcat(const Node& node, int) {
  ASSIGN_OR_RETURN(const int64_t axis, RequiredIntAttribute(node, "axis"));
  int64_t rank = kUnknownRank;
  int first = -1;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const int64_t r = RankOf(node.input(i));
    if (r == kUnknownRank) continue;
    if (rank == kUnknownRank) {
      rank = r;
      first = i;
    } else if (r != rank) {
      return Invalid(node, absl::StrCat("inputs of different ranks: ", RankText(node, first, rank), ", ",
                                        RankText(node, i, r)));
    }
  }
  return CheckAxis(node, "axis", axis, first, rank);
}

absl::Status CheckFlatten(const Node& node, int) {
  ASSIGN_OR_RETURN(const int64_t axis, IntAttribute(node, "axis", 1));
  return CheckAxis(node, "axis", axis, 0, RankOf(node.input(0)), /*end_inclusive=*/true);
}

absl::Status CheckSqueeze(const Node& node, int opset) {
  ASSIGN_OR_RETURN(auto axes, AxesOf(node, opset, 13));
  if (!axes) return absl::OkStatus();
  return CheckAxes(node, "axes", *axes, 0, RankOf(node.input(0)), /*unique=*/true);
}

absl::Status CheckUnsqueeze(const Node& node, int opset) {
  ASSIGN_OR_RETURN(auto axes, AxesOf(node, opset, 13));
  if (!axes) return absl::OkStatus();
  const int64_t rank = RankOf(node.input(0));
  // Axes index the output, whose rank is the input's plus one per axis.
  const int64_t out_rank = rank == kUnknownRank ? kUnknownRank : rank + static_cast<int64_t>(axes->size());
  return CheckAxes(node, "axes", *axes, 0, out_rank, /*unique=*/true);
}

template <int kAxesInputSince>
absl::Status CheckReduce(const Node& node, int opset) {
  ASSIGN_OR_RETURN(auto axes, AxesOf(node, opset, kAxesInputSince));
  if (!axes) return absl::OkStatus();
  return CheckAxes(node, "axes", *axes, 0, RankOf(node.input(0)), /*unique=*/true);
}

absl::Status CheckNorm(const Node& node, int) { return CheckAxisOfInput0(node, -1); }
absl::Status CheckAxisDefault0(const Node& node, int) { return CheckAxisOfInput0(node, 0); }

using Check = absl::Status (*)(const Node&, int);

const absl::flat_hash_map<std::string, Check>& Checks() {
  static const auto* checks = [] {
    auto* m = new absl::flat_hash_map<std::string, Check>{
        {"Transpose", CheckTranspose},
        {"Softmax", CheckSoftmax},
        {"LogSoftmax", CheckSoftmax},
        {"Concat", CheckConcat},
        {"Gather", CheckAxisDefault0},
        {"GatherElements", CheckAxisDefault0},
        {"ScatterElements", CheckAxisDefault0},
        {"Scatter", CheckAxisDefault0},
        {"Split", CheckAxisDefault0},
        {"ArgMax", CheckAxisDefault0},
        {"ArgMin", CheckAxisDefault0},
        {"Flatten", CheckFlatten},
        {"Squeeze", CheckSqueeze},
        {"Unsqueeze", CheckUnsqueeze},
        {"LayerNormalization", CheckNorm},
        {"RMSNormalization", CheckNorm},
        {"ReduceSum", CheckReduce<13>},
    };
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      (*m)[op] = CheckReduce<18>;
    return m;
  }();
  return *checks;
}

}  // namespace

absl::Status CheckNodeAttributes(const Node& node, int opset) {
  if (!node.domain().empty()) return absl::OkStatus();
  auto it = Checks().find(node.op_type());
  if (it == Checks().end()) return absl::OkStatus();
  return it->second(node, opset);
}

}  // namespace attune::validate
