// ONNX Runtime's activations as the standard ops Attune's vectorised kernels
// run (and the product epilogues fold):
//   Gelu(X)                    -> Gelu (erf form)
//   FastGelu(X, bias?)         -> Gelu(X + bias, approximate="tanh"): ORT's
//                                 0.5·x·(1 + tanh(0.7978845608·(x + 0.044715·x³)))
//   BiasGelu(A, B)             -> Gelu(A + B)
//   QuickGelu(X), alpha=1.702  -> Swish(X, alpha): x·sigmoid(alpha·x)
//   BiasAdd(X, bias, skip)     -> X + bias + skip
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/contrib/lowerings.h"

namespace attune::contrib {
namespace {

Value* GeluOf(Lowering& l, Value* x, bool tanh_form) {
  Attributes a;
  if (tanh_form) a.Set("approximate", std::string("tanh"));
  return l.Add("Gelu", {x}, std::move(a), x->type());
}

}  // namespace

absl::Status LowerGelu(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 1, 1, 1));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {}));
  l.Forward(0, GeluOf(l, l.input(0), false));
  return l.Finish(context, "Gelu", "approximate=none");
}

absl::Status LowerFastGelu(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 1, 2, 1));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {}));
  Value* x = l.input(0);
  if (Value* bias = l.input(1)) x = l.Add("Add", {x, bias}, {}, x->type());
  l.Forward(0, GeluOf(l, x, true));
  return l.Finish(context, "Gelu", "approximate=tanh");
}

absl::Status LowerBiasGelu(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 2, 2, 1));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {}));
  Value* x = l.Add("Add", {l.input(0), l.input(1)}, {}, l.input(0)->type());
  l.Forward(0, GeluOf(l, x, false));
  return l.Finish(context, "Gelu", "approximate=none");
}

absl::Status LowerQuickGelu(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 1, 1, 1));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"alpha"}));
  ASSIGN_OR_RETURN(const float alpha, FloatAttr(l, "alpha", 1.702f));
  Attributes a;
  a.Set("alpha", alpha);
  l.Forward(0, l.Add("Swish", {l.input(0)}, std::move(a), l.input(0)->type()));
  return l.Finish(context, "Swish", absl::StrCat("alpha=", alpha));
}

absl::Status LowerBiasAdd(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 3, 3, 1));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {}));
  const ElementType type = l.input(0)->type();
  Value* biased = l.Add("Add", {l.input(0), l.input(1)}, {}, type);
  l.Forward(0, l.Add("Add", {biased, l.input(2)}, {}, type));
  return l.Finish(context, "Add");
}

}  // namespace attune::contrib
