#include "engine/rewrite/dim_binding.h"

namespace attune {

std::optional<int64_t> DimBinding::Evaluate(const Dim& dim) const {
  if (dim.is_known()) return dim.value();
  if (!dim.is_symbol()) return std::nullopt;
  auto it = values_.find(dim.symbol());
  if (it != values_.end()) return it->second;
  auto v = dim.expr()->Evaluate([&](const std::string& name) -> std::optional<int64_t> {
    auto bound = values_.find(name);
    if (bound == values_.end()) return std::nullopt;
    return bound->second;
  });
  if (!v || *v < 0) return std::nullopt;
  return v;
}

std::optional<std::vector<int64_t>> DimBinding::Evaluate(const std::vector<Dim>& shape) const {
  std::vector<int64_t> out;
  for (const Dim& d : shape) {
    auto v = Evaluate(d);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::set<std::string> SymbolsOf(const Dim& dim) {
  std::set<std::string> out;
  if (const DimExpr* e = dim.expr())
    for (const auto& [factors, coefficient] : e->terms())
      for (const DimAtom& atom : factors) out.insert(atom.text());
  return out;
}

namespace {
void AddNamedAtoms(const DimExpr& e, std::set<std::string>& out) {
  for (const auto& [factors, coefficient] : e.terms())
    for (const DimAtom& atom : factors) {
      if (!atom.is_min()) {
        out.insert(atom.text());
        continue;
      }
      AddNamedAtoms(atom.min_first(), out);
      AddNamedAtoms(atom.min_second(), out);
    }
}
}  // namespace

std::set<std::string> NamedSymbolsOf(const Dim& dim) {
  std::set<std::string> out;
  if (const DimExpr* e = dim.expr()) AddNamedAtoms(*e, out);
  return out;
}

bool IsPlainSymbol(const Dim& dim) {
  const DimAtom* atom = dim.expr() != nullptr ? dim.expr()->single_atom() : nullptr;
  return atom != nullptr && atom->is_identifier();
}

}  // namespace attune
