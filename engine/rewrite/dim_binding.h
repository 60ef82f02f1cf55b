// Numbers for symbolic dims: a binding of symbol names to sizes, and the value
// of a Dim under it (symbols may be expressions such as "past+seq" or "4*seq",
// as the shape inference writes them).
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
  /// The value of a known dim or of a symbol expression whose identifiers are
  /// all bound; nullopt for an unknown dim, an unbound identifier, a negative
  /// result or overflow.
  std::optional<int64_t> Evaluate(const Dim& dim) const;
  /// A static shape for a symbolic one; nullopt if any dim cannot be evaluated.
  std::optional<std::vector<int64_t>> Evaluate(const std::vector<Dim>& shape) const;

 private:
  std::map<std::string, int64_t> values_;
};

/// The identifiers a dim's symbol mentions ("past+seq" -> {past, seq}).
std::set<std::string> SymbolsOf(const Dim& dim);
/// True when the dim is one bare identifier ("seq"), not an expression.
bool IsPlainSymbol(const Dim& dim);

}  // namespace attune
