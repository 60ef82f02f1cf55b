#include "engine/dim_assumptions.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/generate/signature.h"
#include "engine/rewrite/dim_binding.h"
#include "engine/session_impl.h"

namespace attune {
namespace {

// The symbol of a whole dim (one name, not an expression or a minimum); empty otherwise.
std::string WholeSymbol(const Value* v, int axis) {
  if (v == nullptr || !v->shape() || axis < 0 || axis >= static_cast<int>(v->shape()->size())) return "";
  const Dim& d = (*v->shape())[axis];
  const DimAtom* atom = d.expr() != nullptr ? d.expr()->single_atom() : nullptr;
  return atom != nullptr && !atom->is_min() ? atom->text() : "";
}

std::vector<TensorInfo> Infos(const std::vector<Value*>& values) {
  std::vector<TensorInfo> infos;
  for (const Value* v : values) infos.push_back(ToTensorInfo(*v));
  return infos;
}

std::optional<DecoderSignature> Signature(const Graph& graph) {
  const std::vector<TensorInfo> inputs = Infos(graph.inputs());
  const std::vector<TensorInfo> outputs = Infos(graph.outputs());
  for (bool require_past : {true, false}) {
    auto sig = FindSignature(inputs, outputs, nullptr, {}, require_past);
    if (sig.ok()) return *std::move(sig);
  }
  return std::nullopt;
}

// `expr` with every plain atom named `symbol` replaced by `replacement`.
DimExpr Substitute(const DimExpr& expr, const std::string& symbol, const DimExpr& replacement) {
  DimExpr sum;
  for (const auto& [monomial, coefficient] : expr.terms()) {
    std::optional<DimExpr> term = DimExpr::Constant(coefficient);
    for (const DimAtom& atom : monomial) {
      const bool hit = !atom.is_min() && atom.text() == symbol;
      term = DimExpr::Mul(*term, hit ? replacement : DimExpr::Atom(atom));
      if (!term) return expr;  // overflow: leave the dim as it was
    }
    auto next = DimExpr::Add(sum, *term);
    if (!next) return expr;
    sum = *std::move(next);
  }
  return sum;
}

void SubstituteShape(std::optional<SymbolicShape>& shape, const DimAssumption& a) {
  if (!shape) return;
  const DimExpr replacement = *a.equals.AsExpr();
  for (Dim& d : *shape)
    if (d.expr() != nullptr) d = Dim::FromExpr(Substitute(*d.expr(), a.symbol, replacement));
}

}  // namespace

std::string DimAssumption::ToString() const {
  return absl::StrCat(input, " dim ", axis, " (", symbol, ") = ", equals.ToString(), ": ", why);
}

std::vector<DimAssumption> FindDecoderDimAssumptions(const Graph& graph) {
  std::vector<DimAssumption> found;
  const std::optional<DecoderSignature> sig = Signature(graph);
  if (!sig) return found;
  const std::string seq = WholeSymbol(graph.FindValue(sig->input_ids), 1);
  if (seq.empty()) return found;
  std::string past;
  for (const CacheBinding& c : sig->cache) {
    if (c.past.empty()) continue;
    const std::string p = WholeSymbol(graph.FindValue(c.past), c.seq_axis);
    // A cross-attention cache (T5's, Whisper's encoder keys) keeps its
    // length: it is not the decoder's past.
    if (!p.empty() && WholeSymbol(graph.FindValue(c.present), c.seq_axis) == p) continue;
    if (p.empty() || (!past.empty() && p != past)) return found;  // pasts of different lengths: no one convention
    past = p;
  }
  const Dim tokens = Dim::Symbol(seq);
  const Dim covered = past.empty() ? tokens : Dim::FromExpr(*DimExpr::Add(DimExpr::Symbol(past), DimExpr::Symbol(seq)));

  auto assume = [&](const std::string& input, const Dim& equals, const char* why) {
    const Value* v = graph.FindValue(input);
    if (v == nullptr || !v->shape() || v->shape()->size() != 2) return;
    const std::string symbol = WholeSymbol(v, 1);
    if (symbol.empty() || symbol == seq || symbol == past) return;
    found.push_back(DimAssumption{input, 1, symbol, equals, why});
  };
  if (!sig->attention_mask.empty())
    assume(sig->attention_mask, covered,
           past.empty() ? "the decoder convention (the mask covers the tokens)"
                        : "the decoder convention (the mask covers the cached and the new tokens)");
  if (!sig->position_ids.empty())
    assume(sig->position_ids, tokens, "the decoder convention (one position per token)");
  return found;
}

void ApplyDimAssumptions(const std::vector<DimAssumption>& assumptions, Graph& graph) {
  auto rewrite = [&](Value* v) {
    if (v == nullptr) return;
    std::optional<SymbolicShape> shape = v->shape();
    for (const DimAssumption& a : assumptions) SubstituteShape(shape, a);
    v->set_shape(std::move(shape));
  };
  for (Value* v : graph.inputs()) rewrite(v);
  for (Node* node : graph.nodes())
    for (Value* v : node->outputs()) rewrite(v);
  for (Value* v : graph.outputs()) rewrite(v);
}

bool DimAssumptionsHold(const std::vector<DimAssumption>& assumptions, const std::vector<ValueInfo>& declared,
                        const std::vector<Tensor>& inputs) {
  if (assumptions.empty()) return true;
  // Whole-symbol dims of the inputs, as this run binds them.
  DimBinding bound;
  std::vector<const Tensor*> by_assumption(assumptions.size(), nullptr);
  for (size_t i = 0; i < declared.size() && i < inputs.size(); ++i) {
    if (!declared[i].shape || static_cast<size_t>(inputs[i].rank()) != declared[i].shape->size()) continue;
    for (size_t d = 0; d < declared[i].shape->size(); ++d) {
      const Dim& dim = (*declared[i].shape)[d];
      const DimAtom* atom = dim.expr() != nullptr ? dim.expr()->single_atom() : nullptr;
      if (atom == nullptr || atom->is_min() || bound.IsBound(atom->text())) continue;
      bound.Bind(atom->text(), inputs[i].shape()[d]);
    }
    for (size_t a = 0; a < assumptions.size(); ++a)
      if (declared[i].name == assumptions[a].input) by_assumption[a] = &inputs[i];
  }
  for (size_t a = 0; a < assumptions.size(); ++a) {
    const Tensor* t = by_assumption[a];
    if (t == nullptr || t->rank() <= assumptions[a].axis) return false;
    const std::optional<int64_t> want = bound.Evaluate(assumptions[a].equals);
    if (!want || *want != t->shape()[assumptions[a].axis]) return false;
  }
  return true;
}

}  // namespace attune
