#include "engine/passes/attention/verify.h"

#include <cmath>
#include <random>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/exec/plan.h"
#include "engine/pattern/constants.h"
#include "engine/passes/attention/dim_binding.h"

namespace attune::attention {
namespace {

// Sizes for the symbolic dims: small, with a causal offset and several rows,
// and unlike the mask proof's probe sizes so that verify mode checks other
// lengths. The second set serves models whose mask buffer is shorter.
struct Sizes {
  int64_t batch, past, other;
};
constexpr Sizes kSizes[] = {{2, 4, 11}, {2, 2, 3}};

int64_t SizeFor(const std::string& symbol, const Sizes& sizes) {
  if (absl::StrContains(symbol, "batch")) return sizes.batch;
  if (absl::StrContains(symbol, "past")) return sizes.past;
  return sizes.other;
}

absl::StatusOr<Tensor> RandomInput(const Value& v, const DimBinding& binding, std::mt19937& rng,
                                   const ExecOptions& options) {
  if (!v.shape().has_value())
    return absl::FailedPreconditionError(absl::StrCat("input '", v.name(), "' has unknown rank"));
  auto dims = binding.Evaluate(*v.shape());
  if (!dims)
    return absl::FailedPreconditionError(
        absl::StrCat("input '", v.name(), "' shape ", SymbolicShapeToString(*v.shape()), " cannot be sized"));
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(v.type(), *dims, options.max_tensor_bytes));
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  switch (v.type()) {
    case ElementType::kFloat32:
      for (float& x : t.values<float>()) x = uniform(rng);
      break;
    case ElementType::kFloat16:
      for (Float16& x : t.values<Float16>()) x = FloatToHalf(uniform(rng));
      break;
    case ElementType::kFloat64:
      for (double& x : t.values<double>()) x = uniform(rng);
      break;
    case ElementType::kBool:  // attend everywhere: a random padding mask could hide whole rows
      for (bool& x : t.values<bool>()) x = true;
      break;
    default:
      break;  // integers stay 0: always a valid index or token
  }
  return t;
}

}  // namespace

absl::StatusOr<VerifyErrors> VerifyFusionPlan(const Graph& graph, const FusionPlan& plan,
                                              const KernelRegistry& registry, const ExecOptions& options) {
  std::unique_ptr<Graph> original = graph.Clone();
  std::unique_ptr<Graph> fused = graph.Clone();
  ASSIGN_OR_RETURN(AppliedPlan applied, ApplyFusionPlan(*fused, plan));
  // Compare each replaced value with what replaces it, as extra outputs.
  for (const auto& [from, to] : plan.replace) {
    Value* a = original->FindValue(from);
    Value* b = fused->FindValue(applied.value_names.at(to.substr(1)));
    if (a == nullptr || b == nullptr) return absl::InternalError("verify: a replaced value is missing");
    original->AddOutput(a);
    fused->AddOutput(b);
  }

  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan_a, Plan::Compile(*original, registry, options));
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan_b, Plan::Compile(*fused, registry, options));
  absl::StatusOr<std::vector<Tensor>> out_a = absl::UnknownError("no sizes tried");
  std::vector<Tensor> inputs;
  for (const Sizes& sizes : kSizes) {
    DimBinding binding;
    for (const Value* in : graph.inputs()) {
      if (!in->shape().has_value()) continue;
      for (const Dim& d : *in->shape())
        for (const std::string& s : SymbolsOf(d))
          if (!binding.IsBound(s) && IsPlainSymbol(Dim::Symbol(s))) binding.Bind(s, SizeFor(s, sizes));
    }
    std::mt19937 rng(1234);
    inputs.clear();
    for (const Value* in : graph.inputs()) {
      if (in->is_constant()) continue;
      ASSIGN_OR_RETURN(Tensor t, RandomInput(*in, binding, rng, options));
      inputs.push_back(std::move(t));
    }
    out_a = plan_a->Run(inputs);
    if (out_a.ok()) break;  // else perhaps a mask buffer shorter than these sizes
  }
  if (!out_a.ok()) return out_a.status();
  ASSIGN_OR_RETURN(std::vector<Tensor> out_b, plan_b->Run(inputs));

  VerifyErrors errors;
  const size_t first = out_a->size() - plan.replace.size();
  for (size_t i = first; i < out_a->size(); ++i) {
    const Tensor& a = (*out_a)[i];
    const Tensor& b = out_b[i];
    if (a.shape() != b.shape())
      return absl::InternalError(absl::StrCat("verify: fused output has shape ", ShapeToString(b.shape()),
                                              ", the original ", ShapeToString(a.shape())));
    auto va = pattern::TensorAsDoubles(a);
    auto vb = pattern::TensorAsDoubles(b);
    if (!va || !vb) return absl::UnimplementedError("verify: outputs are not numeric");
    for (size_t k = 0; k < va->size(); ++k) {
      const double x = (*va)[k], y = (*vb)[k];
      if (std::isnan(x) && std::isnan(y)) continue;
      const double abs = std::isnan(x) || std::isnan(y) ? INFINITY : std::fabs(x - y);
      errors.max_abs = std::max(errors.max_abs, abs);
      errors.max_rel = std::max(errors.max_rel, abs / std::max(std::fabs(x), 1e-6));
    }
  }
  return errors;
}

}  // namespace attune::attention
