// Shape rules of the optimizer steps (ops/training/): each new X and state
// has the type and shape of the X or state it replaces.
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status OptimizerRule(ShapeContext& ctx) {
  const int per_tensor = ctx.num_inputs() - 2;  // X, G and the states, times n
  const int states = ctx.node().op_type() == "Adam" ? 2 : 1;
  const int n = per_tensor / (2 + states);
  if (n <= 0 || per_tensor % (2 + states) != 0 || ctx.num_outputs() != n * (1 + states)) return absl::OkStatus();
  for (int k = 0; k < 1 + states; ++k)
    for (int i = 0; i < n; ++i) CopyFacts(ctx, 2 + (k == 0 ? 0 : k + 1) * n + i, k * n + i);
  return absl::OkStatus();
}

}  // namespace

void AddTrainingRules(RuleTable& table) {
  for (const char* op : {"Adagrad", "Adam", "Momentum"}) table.Add(op, OptimizerRule, "ai.onnx.preview.training");
}

}  // namespace attune::shape_rules
