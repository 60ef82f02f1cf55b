#include "engine/passes/op_fusion/skip_norm_rule.h"

#include "absl/strings/str_cat.h"
#include "engine/passes/op_fusion/rule_checks.h"

namespace attune::op_fusion {
namespace {

using pattern::Capture;
using pattern::Op;
using pattern::Pattern;

constexpr char kAdd[] = "add";

Pattern NormOfSum(const std::string& norm) {
  return Op(norm).CaptureNode(kAnchor).IgnoreExtraInputs().Inputs(
      {Op("Add").CaptureNode(kAdd).Inputs({Capture("x"), Capture("skip")}), Capture("scale")});
}

// The operands as (x, skip): x of the sum's shape, skip of it or of it with
// leading dims 1 or absent, whose elements then repeat over x's rows, and
// cover the normalized dims (from `axis` on) whole. nullopt otherwise.
std::optional<std::pair<const Value*, const Value*>> Operands(const pattern::Match& m, int64_t axis) {
  const Value* a = m.value("x");
  const Value* b = m.value("skip");
  const auto& sum = m.node(kAdd)->output(0)->shape();
  if (!sum || !a->shape() || !b->shape()) return std::nullopt;
  if (*a->shape() != *sum) std::swap(a, b);
  if (*a->shape() != *sum) return std::nullopt;
  const SymbolicShape& x = *sum;
  const SymbolicShape& skip = *b->shape();
  if (skip.size() > x.size()) return std::nullopt;
  const size_t lead = x.size() - skip.size();
  size_t first_full = lead;  // in x's dims: skip equals x from here on
  for (size_t i = 0; i < skip.size(); ++i)
    if (!(skip[i] == x[lead + i])) {
      if (!(skip[i] == Dim::Known(1)) || first_full != lead + i) return std::nullopt;
      first_full = lead + i + 1;
    }
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (static_cast<int64_t>(first_full) > normalized) return std::nullopt;
  return std::make_pair(a, b);
}

int64_t AxisOf(const Node& norm) { return norm.attributes().GetInt("axis", -1).value_or(-1); }

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Node& norm = *m.node(kAnchor);
  const Value& x = *m.value("x");
  const Value& skip = *m.value("skip");
  const Value& sum = *m.node(kAdd)->output(0);
  if (auto why = CheckFusedType(x)) return why;
  for (int o = 1; o < norm.num_outputs(); ++o)
    if (const Value* stat = norm.output(o); stat != nullptr && (!stat->uses().empty() || stat->is_graph_output()))
      return absl::StrCat(norm.Describe(), " has its output ", o, " '", stat->name(), "' read");
  if (!Operands(m, AxisOf(norm)))
    return absl::StrCat("the Add's operands '", x.name(), "' ", ShapeText(x), " and '", skip.name(), "' ",
                        ShapeText(skip), " are not the sum's shape ", ShapeText(sum),
                        " and that shape repeated over leading dims");
  return std::nullopt;
}

OpRewrite Rewrite(const Graph&, const pattern::Match& m, const Value& root) {
  const Node& norm = *m.node(kAnchor);
  const Value& sum = *m.node(kAdd)->output(0);
  const std::string op = "Skip" + norm.op_type();
  OpRewrite rw;
  rw.type = root.type();
  const auto [x, skip] = *Operands(m, AxisOf(norm));
  std::vector<std::string> inputs = {x->name(), skip->name(), m.value("scale")->name()};
  if (norm.op_type() == "LayerNormalization" && norm.num_inputs() > 2 && norm.input(2) != nullptr)
    inputs.push_back(norm.input(2)->name());
  const std::string y = rw.plan.AddValue("y", root.name() + "/" + op, root.type(), root.shape());
  const std::string s = rw.plan.AddValue("sum", sum.name() + "/" + op, sum.type(), sum.shape());
  rw.plan.nodes.push_back(PlannedNode{op, "attune", norm.name() + "/" + op, std::move(inputs), {y, s},
                                      norm.attributes()});
  rw.plan.replace.emplace_back(root.name(), y);
  rw.plan.replace.emplace_back(sum.name(), s);
  rw.record.op = op;
  rw.record.attributes = absl::StrCat("epsilon=", norm.attributes().GetFloat("epsilon", 1e-5f).value_or(1e-5f));
  return rw;
}

OpRule Rule(std::string name, const std::string& norm) {
  OpRule rule;
  rule.name = std::move(name);
  rule.anchor_ops = {norm};
  rule.near = NormOfSum(norm);  // any norm of an Add is a candidate
  rule.min_depth = 0;
  rule.max_depth = 0;
  rule.pattern = NormOfSum(norm);
  rule.kept_nodes = {kAdd};
  rule.check = Check;
  rule.rewrite = Rewrite;
  return rule;
}

}  // namespace

std::vector<OpRule> SkipNormRules() {
  return {Rule("skip_layer_norm", "LayerNormalization"), Rule("skip_rms_norm", "RMSNormalization")};
}

}  // namespace attune::op_fusion
