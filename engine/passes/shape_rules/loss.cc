// Shape rules of the loss ops: NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss give the target's shape (reduction "none") or a
// scalar, and SoftmaxCrossEntropyLoss's log_prob the scores' shape.
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status ClassLossRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(std::string reduction, ctx.attrs().GetString("reduction", "mean"));
  for (int o = 0; o < ctx.num_outputs(); ++o) ctx.output(o).type = ctx.input(0).type;
  if (reduction != "none") ctx.output(0).shape = SymbolicShape{};
  else ctx.output(0).shape = ctx.input(1).shape;
  if (ctx.num_outputs() > 1) ctx.output(1).shape = ctx.input(0).shape;
  return absl::OkStatus();
}

}  // namespace

void AddLossRules(RuleTable& table) {
  table.Add("NegativeLogLikelihoodLoss", ClassLossRule);
  table.Add("SoftmaxCrossEntropyLoss", ClassLossRule);
}

}  // namespace attune::shape_rules
