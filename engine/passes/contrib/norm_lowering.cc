// ONNX Runtime's norms as standard ops: the residual Add and LayerNormalization
// / RMSNormalization, which the skip-norm fusion then makes one
// attune.SkipLayerNormalization / SkipRMSNormalization (the fused kernels),
// and EmbedLayerNormalization as the Gathers, the sum and the norm.
//
// Contracts (ONNX Runtime's docs/ContribOperators.md and its CPU kernels):
//   SkipLayerNormalization(input, skip, gamma, beta?, bias?) -> (output, mean?, inv_std_var?, input_skip_bias_sum?)
//   SkipSimplifiedLayerNormalization(input, skip, gamma, bias?) -> the same outputs; no mean
//   the sum is input + skip (+ bias); skip broadcasts over the leading dims as [.., S, H];
//   the norm is over the last axis with `epsilon`.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/contrib/lowerings.h"
#include "engine/passes/contrib/reduce_helpers.h"

namespace attune::contrib {
namespace {

// gamma, beta and bias are vectors of the hidden size when their shapes are known.
absl::Status CheckHiddenVector(const Lowering& l, int input, const char* name) {
  const Value* v = l.input(input);
  if (v == nullptr) return absl::OkStatus();
  const int rank = Rank(v);
  if (rank > 1 && StaticDim(v, 0) != 1)
    return l.Invalid(absl::StrCat("input ", name, " ('", v->name(), "') must be 1-D [hidden], its rank is ", rank));
  const int64_t hidden = StaticDim(l.input(0), -1);
  const int64_t given = rank >= 1 ? StaticDim(v, -1) : -1;
  if (hidden > 0 && given > 0 && hidden != given)
    return l.Invalid(absl::StrCat("input ", name, " ('", v->name(), "') has ", given, " entries, the hidden size is ",
                                  hidden));
  return absl::OkStatus();
}

Attributes NormAttributes(float epsilon) {
  Attributes a;
  a.Set("axis", int64_t{-1});
  a.Set("epsilon", epsilon);
  return a;
}

}  // namespace

absl::Status LowerSkipLayerNorm(Lowering& l, PassContext& context, bool simplified) {
  RETURN_IF_ERROR(CheckArity(l, 3, simplified ? 4 : 5, 4));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"epsilon"}));
  ASSIGN_OR_RETURN(const float epsilon, FloatAttr(l, "epsilon", 1e-12f));
  if (!(epsilon >= 0.0f)) return l.Invalid(absl::StrCat("attribute epsilon must be >= 0, got ", epsilon));
  const int bias_slot = simplified ? 3 : 4;
  RETURN_IF_ERROR(CheckHiddenVector(l, 2, "gamma"));
  if (!simplified) RETURN_IF_ERROR(CheckHiddenVector(l, 3, "beta"));
  RETURN_IF_ERROR(CheckHiddenVector(l, bias_slot, "bias"));
  const int x_rank = Rank(l.input(0));
  if (x_rank >= 0 && x_rank != 2 && x_rank != 3)
    return l.Invalid(absl::StrCat("input '", l.input(0)->name(), "' must be 2-D or 3-D, its rank is ", x_rank));
  const ElementType type = l.input(0)->type();
  Value* sum = l.Add("Add", {l.input(0), l.input(1)}, {}, type);
  if (Value* bias = l.input(bias_slot)) sum = l.Add("Add", {sum, bias}, {}, type);
  l.Forward(3, sum);
  if (simplified) {
    if (l.wanted_output(1) != nullptr)
      return l.Unsupported("output 1 (mean) is not computed by an RMS norm (ONNX Runtime leaves it unset)");
    l.Forward(0, l.Add("RMSNormalization", {sum, l.input(2)}, NormAttributes(epsilon), type));
    if (l.wanted_output(2) != nullptr) l.Forward(2, InverseRms(l, sum, epsilon));
    return l.Finish(context, "SkipRMSNormalization", absl::StrCat("epsilon=", epsilon));
  }
  const bool stats = l.wanted_output(1) != nullptr || l.wanted_output(2) != nullptr;
  std::vector<Value*> in = {sum, l.input(2)};
  if (l.input(3) != nullptr) in.push_back(l.input(3));
  std::vector<Value*> outs = l.AddMulti("LayerNormalization", in, stats ? 3 : 1, NormAttributes(epsilon), type);
  l.Forward(0, outs[0]);
  if (stats) l.Forward(1, outs[1]), l.Forward(2, outs[2]);
  return l.Finish(context, "SkipLayerNormalization", absl::StrCat("epsilon=", epsilon));
}

absl::Status LowerSimplifiedLayerNorm(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 2, 2, 2));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"axis", "epsilon", "stash_type"}));
  ASSIGN_OR_RETURN(const int64_t axis, IntAttr(l, "axis", -1));
  ASSIGN_OR_RETURN(const float epsilon, FloatAttr(l, "epsilon", 1e-5f));
  ASSIGN_OR_RETURN(const int64_t stash_type, IntAttr(l, "stash_type", 1));
  Attributes a;
  a.Set("axis", axis);
  a.Set("epsilon", epsilon);
  a.Set("stash_type", stash_type);
  Value* x = l.input(0);
  l.Forward(0, l.Add("RMSNormalization", {x, l.input(1)}, std::move(a), x->type()));
  if (l.wanted_output(1) != nullptr) {
    if (axis != -1 && axis != Rank(x) - 1)
      return l.Unsupported("output 1 (inv_std_var) is computed for axis -1 only");
    l.Forward(1, InverseRms(l, x, epsilon));
  }
  return l.Finish(context, "RMSNormalization", absl::StrCat("axis=", axis, " epsilon=", epsilon));
}

absl::Status LowerLayerNorm(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 2, 3, 3));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"axis", "epsilon", "stash_type"}));
  Attributes a = l.node()->attributes();
  std::vector<Value*> in = {l.input(0), l.input(1)};
  if (l.input(2) != nullptr) in.push_back(l.input(2));
  const int count = l.node()->num_outputs();
  std::vector<Value*> outs = l.AddMulti("LayerNormalization", in, count, std::move(a), l.input(0)->type());
  for (int i = 0; i < count; ++i) l.Forward(i, outs[i]);
  return l.Finish(context, "LayerNormalization");
}

}  // namespace attune::contrib
