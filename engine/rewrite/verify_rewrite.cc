#include "engine/rewrite/verify_rewrite.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/ir/dim_expr.h"
#include "engine/pattern/constants.h"
#include "engine/rewrite/dim_binding.h"

namespace attune {
namespace {

// Sizes for the symbolic dims: small, with a causal offset and several rows,
// and unlike the mask proof's probe sizes so that verify mode checks other
// lengths. The first set reaches beyond the mask's windows and offsets; the
// later ones serve models whose mask buffer is shorter.
struct Sizes {
  int64_t batch, past, other;
};
constexpr Sizes kShortSizes[] = {{2, 4, 11}, {2, 2, 3}};
// Cost bound on the long size (the proof's cap on probe lengths, and a step).
constexpr int64_t kMaxVerifyLength = 4096 + 16;

std::vector<Sizes> SizesFor(const std::vector<int64_t>& long_lengths) {
  std::vector<Sizes> sizes;
  // One batch: the unfused graph holds a few T x T score matrices per head.
  for (int64_t t : long_lengths)
    if (t > kShortSizes[0].other) sizes.push_back({1, 4, std::min(t, kMaxVerifyLength)});
  for (const Sizes& s : kShortSizes) sizes.push_back(s);
  return sizes;
}

int64_t SizeFor(const std::string& symbol, const Sizes& sizes) {
  if (absl::StrContains(symbol, "batch")) return sizes.batch;
  if (absl::StrContains(symbol, "past")) return sizes.past;
  return sizes.other;
}

// Input symbols a Concat ties to an expression of other dims: it runs only
// when every input has the same dims off its axis, so BLOOM's past keys
// (batch_x_heads, D, past) joined to merged new keys (4*batch, D, seq) need
// batch_x_heads = 4*batch. Sizing the symbol by the expression gives inputs
// the graph runs at, where sizing each symbol alone would not.
std::vector<std::pair<std::string, Dim>> ConcatTiedSymbols(const Graph& graph) {
  std::set<std::string> input_symbols;
  for (const Value* in : graph.inputs())
    if (in->shape().has_value())
      for (const Dim& d : *in->shape())
        if (IsPlainSymbol(d)) input_symbols.insert(d.symbol());
  std::vector<std::pair<std::string, Dim>> tied;
  std::set<std::string> seen;
  for (const Node* n : graph.nodes()) {
    if (!n->domain().empty() || n->op_type() != "Concat" || n->num_inputs() < 2) continue;
    auto axis = n->attributes().GetInt("axis");
    const Value* first = n->input(0);
    if (!axis.ok() || first == nullptr || !first->shape().has_value()) continue;
    const int64_t rank = static_cast<int64_t>(first->shape()->size());
    for (int64_t d = 0; d < rank; ++d) {
      if (d == *axis || d == *axis + rank) continue;
      std::optional<std::string> symbol;
      std::optional<Dim> expression;
      for (const Value* in : n->inputs()) {
        if (in == nullptr || !in->shape().has_value() || static_cast<int64_t>(in->shape()->size()) != rank) continue;
        const Dim& dim = (*in->shape())[d];
        if (IsPlainSymbol(dim) && input_symbols.contains(dim.symbol())) symbol = dim.symbol();
        else if (dim.is_symbol() && !IsPlainSymbol(dim)) expression = dim;
      }
      if (!symbol || !expression || SymbolsOf(*expression).contains(*symbol) || !seen.insert(*symbol).second) continue;
      tied.emplace_back(*symbol, *expression);
    }
  }
  return tied;
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

// Ones, with the first two keys of batch 0 and the last two of the last batch
// padded (so rows that see no key are compared too).
void FillPadding(Tensor& t) {
  if (t.rank() != 2) return;
  const int64_t batch = t.shape()[0], keys = t.shape()[1];
  auto set = [&](int64_t b, int64_t j, bool shows) {
    const int64_t k = b * keys + j;
    switch (t.type()) {
      case ElementType::kBool: t.data<bool>()[k] = shows; break;
      case ElementType::kInt64: t.data<int64_t>()[k] = shows ? 1 : 0; break;
      case ElementType::kInt32: t.data<int32_t>()[k] = shows ? 1 : 0; break;
      case ElementType::kFloat32: t.data<float>()[k] = shows ? 1.0f : 0.0f; break;
      default: break;
    }
  };
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t j = 0; j < keys; ++j) {
      const bool padded = (b == 0 && j < 2) || (b == batch - 1 && b > 0 && j >= keys - 2);
      set(b, j, !padded);
    }
}

// Where verify mode injects non-finite values: each float value outside the
// plan that a planned node reads (Q, K, V, a mask, a past cache). Both graphs
// read it through Add(value, poison), a new input of its shape that is zero
// in the ordinary rounds and holds one NaN or infinity in the non-finite ones,
// so the fused node and the subgraph it replaces see the same values.
struct PoisonSite {
  std::string value;
  ElementType type;
  SymbolicShape shape;
};

// A key padding input is not one: the fused op refuses its values other than
// 0 and 1 (they have no mask meaning), where the subgraph computes with them.
std::vector<PoisonSite> PoisonSites(const Graph& graph, const RewritePlan& plan,
                                    const std::vector<std::string>& padding_inputs) {
  // A site is sized by the symbols the graph's inputs bind.
  std::set<std::string> bound;
  for (const Value* in : graph.inputs())
    if (in->shape().has_value())
      for (const Dim& d : *in->shape())
        for (const std::string& s : SymbolsOf(d)) bound.insert(s);
  auto sizable = [&](const SymbolicShape& shape) {
    for (const Dim& d : shape) {
      if (d.is_unknown()) return false;
      for (const std::string& s : SymbolsOf(d))
        if (!bound.count(s)) return false;
    }
    return true;
  };
  std::vector<PoisonSite> sites;
  std::set<std::string> seen;
  for (const PlannedNode& node : plan.nodes)
    for (const std::string& name : node.inputs) {
      if (name.empty() || name[0] == '$' || !seen.insert(name).second) continue;
      if (std::find(padding_inputs.begin(), padding_inputs.end(), name) != padding_inputs.end()) continue;
      const Value* v = graph.FindValue(name);
      if (v == nullptr || v->is_constant() || !v->shape().has_value() || !sizable(*v->shape())) continue;
      if (v->type() != ElementType::kFloat32 && v->type() != ElementType::kFloat16) continue;
      sites.push_back({name, v->type(), *v->shape()});
    }
  return sites;
}

void InsertPoison(Graph& graph, const std::vector<PoisonSite>& sites) {
  for (const PoisonSite& site : sites) {
    Value* v = graph.FindValue(site.value);
    Value* poison = graph.AddValue(site.value + "/verify_poison", site.type, site.shape);
    graph.AddInput(poison);
    Value* poisoned = graph.AddValue(site.value + "/verify_poisoned", site.type, site.shape);
    const std::vector<Use> readers = v->uses();
    graph.AddNode("Add", "", site.value + "/verify_poison_add", {v, poison}, {poisoned});
    for (const Use& use : readers) graph.SetNodeInput(use.node, use.index, poisoned);
  }
}

// A poison input: zeros, or `special` at one element a third of the way in.
absl::StatusOr<Tensor> PoisonInput(const PoisonSite& site, const DimBinding& binding, std::optional<float> special,
                                   const ExecOptions& options) {
  auto dims = binding.Evaluate(site.shape);
  if (!dims)
    return absl::FailedPreconditionError(absl::StrCat("value '", site.value, "' shape ",
                                                      SymbolicShapeToString(site.shape), " cannot be sized"));
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(site.type, *dims, options.max_tensor_bytes));
  const int64_t n = t.num_elements();
  if (special && n > 0) {
    const int64_t at = n / 3;
    if (site.type == ElementType::kFloat32) t.data<float>()[at] = *special;
    else t.data<Float16>()[at] = FloatToHalf(*special);
  }
  return t;
}

// NaN, +inf, -inf or finite.
int ValueClass(double v) { return std::isnan(v) ? 0 : v == INFINITY ? 1 : v == -INFINITY ? 2 : 3; }

// The first replaced output element where one run gives NaN and the other
// not, or infinities of another sign or against a finite value; "" if none.
std::string NonFiniteMismatch(const std::vector<Tensor>& out_a, const std::vector<Tensor>& out_b, size_t replaced) {
  for (size_t i = out_a.size() - replaced; i < out_a.size(); ++i) {
    auto va = pattern::TensorAsDoubles(out_a[i]);
    auto vb = pattern::TensorAsDoubles(out_b[i]);
    if (!va || !vb || va->size() != vb->size()) return "the outputs cannot be compared";
    for (size_t k = 0; k < va->size(); ++k) {
      const double x = (*va)[k], y = (*vb)[k];
      if (ValueClass(x) == ValueClass(y)) continue;
      return absl::StrCat("replaced output ", i - (out_a.size() - replaced), " element ", k, " is ", x,
                          " unfused but ", y, " fused");
    }
  }
  return "";
}

// Folds the last `replaced` outputs' differences into `errors`.
absl::Status Compare(const std::vector<Tensor>& out_a, const std::vector<Tensor>& out_b, size_t replaced,
                     VerifyErrors& errors) {
  const size_t first = out_a.size() - replaced;
  for (size_t i = first; i < out_a.size(); ++i) {
    const Tensor& a = out_a[i];
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
  return absl::OkStatus();
}

}  // namespace

double VerifyTolerance(ElementType type) {
  switch (type) {
    case ElementType::kFloat16: return 4 * 9.765625e-4;  // 4 eps of fp16
    case ElementType::kBFloat16: return 4 * 7.8125e-3;   // 4 eps of bf16
    default: return 1e-4;
  }
}

std::string VerifyVerdict(const VerifyErrors& errors, ElementType type) {
  if (!errors.nonfinite_mismatch.empty()) return absl::StrCat("verify: ", errors.nonfinite_mismatch, "; fusion undone");
  const double tolerance = VerifyTolerance(type);
  if (errors.max_abs > tolerance)
    return absl::StrCat("verify: fused output differs by ", errors.max_abs, " (tolerance ", tolerance,
                        "); fusion undone");
  return "";
}

absl::StatusOr<VerifyErrors> VerifyRewritePlan(const Graph& graph, const RewritePlan& plan,
                                              const SubgraphEvaluator& evaluator, const ExecOptions& options,
                                              const std::vector<int64_t>& long_lengths,
                                              const std::vector<std::string>& padding_inputs) {
  std::unique_ptr<Graph> original = graph.Clone();
  // The key-count symbols of padding inputs that no other input shares.
  std::set<std::string> padding_symbols;
  for (const Value* in : graph.inputs()) {
    if (std::find(padding_inputs.begin(), padding_inputs.end(), in->name()) == padding_inputs.end()) continue;
    if (!in->shape().has_value() || in->shape()->size() != 2 || !IsPlainSymbol((*in->shape())[1])) continue;
    padding_symbols.insert((*in->shape())[1].symbol());
  }
  for (const Value* in : graph.inputs()) {
    if (!in->shape().has_value() ||
        std::find(padding_inputs.begin(), padding_inputs.end(), in->name()) != padding_inputs.end())
      continue;
    for (const Dim& d : *in->shape())
      for (const std::string& sym : SymbolsOf(d)) padding_symbols.erase(sym);
  }
  std::unique_ptr<Graph> fused = graph.Clone();
  ASSIGN_OR_RETURN(AppliedPlan applied, ApplyRewritePlan(*fused, plan));
  // Compare each replaced value with what replaces it, as extra outputs.
  for (const auto& [from, to] : plan.replace) {
    Value* a = original->FindValue(from);
    Value* b = fused->FindValue(applied.value_names.at(to.substr(1)));
    if (a == nullptr || b == nullptr) return absl::InternalError("verify: a replaced value is missing");
    original->AddOutput(a);
    fused->AddOutput(b);
  }
  const std::vector<PoisonSite> sites = PoisonSites(graph, plan, padding_inputs);
  InsertPoison(*original, sites);
  InsertPoison(*fused, sites);

  ASSIGN_OR_RETURN(std::unique_ptr<PreparedSubgraph> plan_a, evaluator.Prepare(*original, options));
  ASSIGN_OR_RETURN(std::unique_ptr<PreparedSubgraph> plan_b, evaluator.Prepare(*fused, options));
  const std::vector<std::pair<std::string, Dim>> tied = ConcatTiedSymbols(graph);
  auto bind = [&](const Sizes& sizes, int64_t keys) {
    DimBinding binding;
    for (const std::string& s : padding_symbols) binding.Bind(s, keys);
    for (const Value* in : graph.inputs()) {
      if (!in->shape().has_value()) continue;
      for (const Dim& d : *in->shape())
        for (const std::string& s : SymbolsOf(d))
          if (!binding.IsBound(s) && IsIdentifier(s)) binding.Bind(s, SizeFor(s, sizes));
    }
    for (const auto& [symbol, expression] : tied)
      if (auto value = binding.Evaluate(expression)) binding.Bind(symbol, *value);
    return binding;
  };
  // The graph's inputs, then one poison input per site: zeros, or `special` at `site`.
  auto make_inputs = [&](const DimBinding& binding, size_t site, std::optional<float> special)
      -> absl::StatusOr<std::vector<Tensor>> {
    std::mt19937 rng(1234);
    std::vector<Tensor> inputs;
    for (const Value* in : graph.inputs()) {
      if (in->is_constant()) continue;
      ASSIGN_OR_RETURN(Tensor t, RandomInput(*in, binding, rng, options));
      if (std::find(padding_inputs.begin(), padding_inputs.end(), in->name()) != padding_inputs.end()) FillPadding(t);
      inputs.push_back(std::move(t));
    }
    for (size_t p = 0; p < sites.size(); ++p) {
      ASSIGN_OR_RETURN(Tensor t, PoisonInput(sites[p], binding, p == site ? special : std::nullopt, options));
      inputs.push_back(std::move(t));
    }
    return inputs;
  };

  // Every size the unfused graph runs at is compared (a mask buffer may stop
  // it at the long ones); at least one must run.
  absl::Status last = absl::UnknownError("no sizes tried");
  bool compared = false;
  VerifyErrors errors;
  std::optional<DimBinding> short_binding;  // the first short size the unfused graph runs at
  const std::vector<Sizes> all_sizes = SizesFor(long_lengths);
  for (size_t z = 0; z < all_sizes.size(); ++z) {
    const Sizes& sizes = all_sizes[z];
    const bool is_short = z + std::size(kShortSizes) >= all_sizes.size();
    // A padding input's own key count: past + sequence with a cache, else the sequence.
    for (int64_t keys : {sizes.past + sizes.other, sizes.other}) {
      if (padding_symbols.empty() && keys != sizes.other) continue;
      const DimBinding binding = bind(sizes, keys);
      ASSIGN_OR_RETURN(std::vector<Tensor> inputs, make_inputs(binding, sites.size(), std::nullopt));
      absl::StatusOr<std::vector<Tensor>> out_a = plan_a->Evaluate(inputs);
      if (!out_a.ok()) {
        last = out_a.status();
        continue;
      }
      ASSIGN_OR_RETURN(std::vector<Tensor> out_b, plan_b->Evaluate(std::move(inputs)));
      RETURN_IF_ERROR(Compare(*out_a, out_b, plan.replace.size(), errors));
      errors.longest_sequence = std::max(errors.longest_sequence, sizes.other);
      compared = true;
      if (is_short && !short_binding) short_binding = binding;
      break;
    }
  }
  if (!compared) return last;

  // Non-finite rounds: a NaN, +inf or -inf at one element of each site must
  // give NaN, infinities and finite values where the subgraph gives them.
  if (short_binding) {
    for (size_t site = 0; site < sites.size() && errors.nonfinite_mismatch.empty(); ++site)
      for (float special : {NAN, INFINITY, -INFINITY}) {
        ASSIGN_OR_RETURN(std::vector<Tensor> inputs, make_inputs(*short_binding, site, special));
        absl::StatusOr<std::vector<Tensor>> out_a = plan_a->Evaluate(inputs);
        if (!out_a.ok()) continue;
        ASSIGN_OR_RETURN(std::vector<Tensor> out_b, plan_b->Evaluate(std::move(inputs)));
        const std::string mismatch = NonFiniteMismatch(*out_a, out_b, plan.replace.size());
        if (mismatch.empty()) continue;
        errors.nonfinite_mismatch = absl::StrCat("with ", special, " at one element of '", sites[site].value,
                                                 "', ", mismatch);
        break;
      }
    errors.nonfinite_checked = !sites.empty();
  }
  return errors;
}

}  // namespace attune
