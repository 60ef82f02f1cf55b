#include "engine/pattern/predicates.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/pattern/constants.h"

namespace attune::pattern {

NodeCheck IsNoOpCast() {
  return [](const Node& node, const Match&) -> std::optional<std::string> {
    auto to = node.attributes().GetInt("to");
    const Value* in = node.input(0);
    if (!to.ok() || in == nullptr) return std::string("Cast without a target type");
    if (in->type() == ElementType::kUndefined) return std::string("input type unknown");
    if (static_cast<int64_t>(in->type()) != *to)
      return absl::StrCat("converts ", ElementTypeName(in->type()), " to ",
                          ElementTypeName(static_cast<ElementType>(*to)));
    return std::nullopt;
  };
}

NodeCheck IsInferenceDropout() {
  return [](const Node& node, const Match&) -> std::optional<std::string> {
    const Value* training = node.input(2);
    if (training == nullptr) return std::nullopt;
    const Tensor* t = ConstantOf(training);
    if (t == nullptr) return std::string("training_mode is not a constant");
    auto v = UniformValue(*t);
    if (!v || *v != 0.0) return std::string("training_mode is true");
    return std::nullopt;
  };
}

std::vector<OpPattern> IdentityWrappers() {
  return {Op("Identity"), Op("Dropout").IgnoreExtraInputs().Check(IsInferenceDropout()),
          Op("Cast").Check(IsNoOpCast())};
}

std::optional<std::string> CheckInternalUses(const Match& match, const Node* root,
                                             const std::vector<const Node*>& kept) {
  const std::vector<Node*> nodes = match.nodes();
  const absl::flat_hash_set<const Node*> inside(nodes.begin(), nodes.end());
  auto quote = [](const Value* v) { return absl::StrCat("'", v->name(), "'"); };
  for (const Node* n : nodes) {
    if (n == root || std::find(kept.begin(), kept.end(), n) != kept.end()) continue;
    for (const Value* out : n->outputs()) {
      if (out == nullptr) continue;
      if (out->is_graph_output())
        return absl::StrCat("intermediate ", quote(out), " (from ", n->Describe(), ") is a graph output");
      for (const Use& use : out->uses())
        if (!inside.contains(use.node))
          return absl::StrCat("intermediate ", quote(out), " (from ", n->Describe(), ") is also read by ",
                              use.node->Describe());
    }
  }
  return std::nullopt;
}

bool IsPermutation(const std::vector<int64_t>& perm) {
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

absl::StatusOr<std::vector<int64_t>> TransposePerm(const Node& node) {
  const Value* in = node.input(0);
  const bool rank_known = in != nullptr && in->shape().has_value();
  if (node.attributes().Has("perm")) {
    auto perm = node.attributes().GetInts("perm");
    // The validator refuses such a node; a pattern still never hands it on.
    if (!perm.ok()) return absl::InvalidArgumentError("perm is not a list of ints");
    const std::string text = absl::StrCat("[", absl::StrJoin(*perm, ", "), "]");
    if (!IsPermutation(*perm)) return absl::InvalidArgumentError(absl::StrCat("perm ", text, " is not a permutation"));
    if (rank_known && in->shape()->size() != perm->size())
      return absl::InvalidArgumentError(
          absl::StrCat("perm ", text, " has ", perm->size(), " entries for a rank-", in->shape()->size(), " input"));
    return *perm;
  }
  if (!rank_known) return absl::FailedPreconditionError("no perm, and the input's rank is unknown");
  std::vector<int64_t> perm;
  for (int64_t i = static_cast<int64_t>(in->shape()->size()) - 1; i >= 0; --i) perm.push_back(i);
  return perm;
}

}  // namespace attune::pattern
