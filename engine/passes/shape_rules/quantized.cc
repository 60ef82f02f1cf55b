// Shape rules of the quantized product (com.microsoft.MatMulNBits): Y has A's
// type and shape with the last dim K replaced by the attribute N; and of the
// half-size weight product (attune.HalfWeightMatMul): the same with W's N.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/half_weight_matmul.h"
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

// attune.HalfWeightMatMul: float32 Y of A's shape with the last dim K replaced by W's N.
absl::Status HalfWeightMatMulRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ElementType::kFloat32;
  const std::optional<SymbolicShape>& a = ctx.input(halfw::kInputA).shape;
  const std::optional<SymbolicShape>& w = ctx.input(halfw::kInputW).shape;
  if (!a || !w) return absl::OkStatus();
  if (a->empty() || w->size() != 2)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": needs A of rank >= 1 and W [N, K]"));
  const Dim &k = a->back(), &wk = (*w)[1];
  if (k.is_known() && wk.is_known() && k.value() != wk.value())
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": input 'A' has last dim ", k.value(),
                                                   " but W has K = ", wk.value()));
  SymbolicShape shape(a->begin(), a->end() - 1);
  shape.push_back((*w)[0]);
  out.shape = std::move(shape);
  return absl::OkStatus();
}

}  // namespace

void AddQuantizedRules(RuleTable& table) {
  table.Add(qmatmul::kOpType, MatMulNBitsRule, qmatmul::kDomain);
  table.Add(halfw::kOpType, HalfWeightMatMulRule, halfw::kDomain);
}

}  // namespace attune::shape_rules
