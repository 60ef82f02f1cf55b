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

std::string ShapeText(const Value& v) { return v.shape() ? SymbolicShapeToString(*v.shape()) : "(shape unknown)"; }

std::optional<std::string> Check(const Graph&, const pattern::Match& m) {
  const Node& norm = *m.node(kAnchor);
  const Value& x = *m.value("x");
  const Value& skip = *m.value("skip");
  const Value& sum = *m.node(kAdd)->output(0);
  if (auto why = CheckFusedType(x)) return why;
  for (int o = 1; o < norm.num_outputs(); ++o)
    if (const Value* stat = norm.output(o); stat != nullptr && (!stat->uses().empty() || stat->is_graph_output()))
      return absl::StrCat(norm.Describe(), " has its output ", o, " '", stat->name(), "' read");
  if (!x.shape() || !skip.shape() || !sum.shape() || *x.shape() != *skip.shape() || *sum.shape() != *x.shape())
    return absl::StrCat("the Add is not of two tensors of one shape: '", x.name(), "' ", ShapeText(x), " + '",
                        skip.name(), "' ", ShapeText(skip));
  return std::nullopt;
}

OpRewrite Rewrite(const Graph&, const pattern::Match& m, const Value& root) {
  const Node& norm = *m.node(kAnchor);
  const Value& sum = *m.node(kAdd)->output(0);
  const std::string op = "Skip" + norm.op_type();
  OpRewrite rw;
  rw.type = root.type();
  std::vector<std::string> inputs = {m.value("x")->name(), m.value("skip")->name(), m.value("scale")->name()};
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
