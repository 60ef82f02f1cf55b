#include "engine/passes/op_fusion/rule_checks.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "engine/pattern/constants.h"

namespace attune::op_fusion {

std::optional<std::string> CheckFusedType(const Value& x) {
  if (x.type() == ElementType::kFloat32 || x.type() == ElementType::kFloat16) return std::nullopt;
  return absl::StrCat("'", x.name(), "' is ", ElementTypeName(x.type()),
                      "; only float32 and float16 chains are fused");
}

std::optional<std::string> CheckScalarOperands(const pattern::Match& match, const Value& x,
                                               const std::vector<const Value*>& ignored) {
  const std::vector<Node*> nodes = match.nodes();
  const absl::flat_hash_set<const Node*> inside(nodes.begin(), nodes.end());
  // -1: x's rank is unknown.
  const int64_t rank = x.shape() ? static_cast<int64_t>(x.shape()->size()) : -1;
  for (const Node* n : nodes)
    for (const Value* in : n->inputs()) {
      if (in == nullptr || in == &x || (in->producer() != nullptr && inside.contains(in->producer()))) continue;
      if (std::find(ignored.begin(), ignored.end(), in) != ignored.end()) continue;
      const Tensor* t = pattern::ConstantOf(in);
      if (t == nullptr)
        return absl::StrCat(n->Describe(), " reads '", in->name(), "', which is neither x nor a constant");
      if (t->num_elements() != 1)
        return absl::StrCat("constant '", in->name(), "' of ", n->Describe(), " holds ", t->num_elements(),
                            " elements");
      if (rank < 0 && t->rank() > 0)
        return absl::StrCat("constant '", in->name(), "' of ", n->Describe(), " has rank ", t->rank(),
                            " and the rank of '", x.name(), "' is unknown");
      if (rank >= 0 && t->rank() > rank)
        return absl::StrCat("constant '", in->name(), "' of ", n->Describe(), " has rank ", t->rank(),
                            ", more than '", x.name(), "' (", rank, ")");
    }
  return std::nullopt;
}

std::string ShapeText(const Value& v) { return v.shape() ? SymbolicShapeToString(*v.shape()) : "(shape unknown)"; }

OpRewrite SingleNodeRewrite(const Value& root, const std::string& op, std::vector<std::string> inputs,
                            Attributes attributes) {
  OpRewrite rw;
  rw.type = root.type();
  const std::string out = rw.plan.AddValue("y", root.name() + "/" + op, root.type(), root.shape());
  const std::string at = root.producer() != nullptr ? root.producer()->name() : root.name();
  PlannedNode node{op, "", at + "/" + op, std::move(inputs), {out}, std::move(attributes)};
  rw.plan.nodes.push_back(std::move(node));
  rw.plan.replace.emplace_back(root.name(), out);
  rw.record.op = op;
  return rw;
}

}  // namespace attune::op_fusion
