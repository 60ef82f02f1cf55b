// Shape rule of the quantized product (com.microsoft.MatMulNBits): Y has A's
// type and shape with the last dim K replaced by the attribute N.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/quantized_matmul.h"
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status MatMulNBitsRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(qmatmul::QuantizedMatMulParams params,
                   qmatmul::ReadQuantizedMatMulParams(ctx.attrs(), ctx.node().Describe()));
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(qmatmul::kInputA).type;
  const std::optional<SymbolicShape>& a = ctx.input(qmatmul::kInputA).shape;
  if (!a) return absl::OkStatus();
  if (a->empty()) return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": input 'A' is a scalar"));
  const Dim& k = a->back();
  if (k.is_known() && k.value() != params.k)
    return absl::InvalidArgumentError(
        absl::StrCat(ctx.node().Describe(), ": input 'A' has last dim ", k.value(), " but attribute K is ", params.k));
  SymbolicShape shape(a->begin(), a->end() - 1);
  shape.push_back(Dim::Known(params.n));
  out.shape = std::move(shape);
  return absl::OkStatus();
}

}  // namespace

void AddQuantizedRules(RuleTable& table) { table.Add(qmatmul::kOpType, MatMulNBitsRule, qmatmul::kDomain); }

}  // namespace attune::shape_rules
