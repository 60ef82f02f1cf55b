// Numbers for symbolic dims: a binding of symbol names to sizes, and the value
// of a Dim's expression under it ("past+seq" or "4*seq", as the shape
// inference writes them).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/ir/dim.h"

namespace attune {

class DimBinding {
 public:
  void Bind(const std::string& symbol, int64_t value) { values_[symbol] = value; }
  bool IsBound(const std::string& symbol) const { return values_.count(symbol) > 0; }
  /// The value of a known dim, or of a symbol whose atoms are all bound (a
  /// minimum that is not bound itself is the minimum of its arguments). A
  /// symbol bound under its whole text ("past+seq") takes that value. nullopt
  /// for an unknown dim, an unbound atom, a negative result or overflow.
  std::optional<int64_t> Evaluate(const Dim& dim) const;
  /// A static shape for a symbolic one; nullopt if any dim cannot be evaluated.
  std::optional<std::vector<int64_t>> Evaluate(const std::vector<Dim>& shape) const;

 private:
  std::map<std::string, int64_t> values_;
};

/// The atoms a dim's expression is made of, by the names a binding knows them
/// by: "past+seq" -> {past, seq}, "batch*(min(64,seq))" -> {batch, min(64,seq)}.
std::set<std::string> SymbolsOf(const Dim& dim);
/// The names a dim's value follows from, looking inside minimums (whose value
/// is computed from their arguments): "min(64,seq)+past" -> {past, seq}.
std::set<std::string> NamedSymbolsOf(const Dim& dim);
/// True when the dim is one bare identifier ("seq"), not an expression.
bool IsPlainSymbol(const Dim& dim);

}  // namespace attune
