// Shape rules of ScatterND, ScatterElements, Scatter and TensorScatter: the output is a copy
// of data with some elements replaced, so it has data's type and shape.
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status ScatterRule(ShapeContext& ctx) {
  CopyFacts(ctx, 0);
  return absl::OkStatus();
}

}  // namespace

void AddScatterRules(RuleTable& table) {
  for (const char* op : {"ScatterND", "ScatterElements", "Scatter", "TensorScatter"}) table.Add(op, ScatterRule);
}

}  // namespace attune::shape_rules
