// Arithmetic on symbolic dimensions: a Dim read as a polynomial in its symbols
// ("batch*seq", "past+seq", "12*seq"), so that shape rules can add, multiply and
// divide dims and compare them by meaning rather than by spelling.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/dim.h"

namespace attune {

/// An integer polynomial over dim symbols, kept in a canonical form: equal
/// polynomials print the same string, which becomes the symbol of the Dim.
class DimExpr {
 public:
  DimExpr() = default;  // zero
  static DimExpr Constant(int64_t value);
  static DimExpr Symbol(const std::string& name);
  /// Reads a Dim: a number, or a symbol parsed as an expression when it is
  /// written as one ("batch*seq"), else as one opaque symbol. Unknown -> nullopt.
  static std::optional<DimExpr> FromDim(const Dim& dim);

  bool is_constant() const;
  /// The value of a constant expression (0 for the zero polynomial).
  int64_t constant_value() const;
  /// The term without symbols (the value when every symbol is 0).
  int64_t constant_term() const;
  /// True when no coefficient is negative: with dims >= 0 the value is >= 0.
  bool IsNonNegative() const;
  /// A known Dim for a constant, else a symbol spelled by ToString().
  Dim ToDim() const;
  std::string ToString() const;

  bool operator==(const DimExpr& other) const { return terms_ == other.terms_; }

  // Arithmetic; nullopt on int64 overflow of a coefficient.
  static std::optional<DimExpr> Add(const DimExpr& a, const DimExpr& b);
  static std::optional<DimExpr> Sub(const DimExpr& a, const DimExpr& b);
  static std::optional<DimExpr> Mul(const DimExpr& a, const DimExpr& b);
  /// a / b when b is a non-zero monomial dividing every term of a exactly.
  static std::optional<DimExpr> DivExact(const DimExpr& a, const DimExpr& b);

 private:
  using Monomial = std::vector<std::string>;  // sorted symbol factors; empty = constant term
  std::map<Monomial, int64_t> terms_;          // no zero coefficients
};

/// Two dims that are provably equal (same number, or the same polynomial).
bool DimsEqual(const Dim& a, const Dim& b);
/// Product of dims as a Dim; unknown if any dim is unknown or on overflow.
Dim DimProduct(const std::vector<Dim>& dims);
/// a + b, a - b, a * b as Dims (unknown when an operand is unknown).
Dim DimAdd(const Dim& a, const Dim& b);
Dim DimSub(const Dim& a, const Dim& b);
Dim DimMul(const Dim& a, const Dim& b);
/// a / b when provably exact, else unknown.
Dim DimDivExact(const Dim& a, const Dim& b);
/// min(a, b): a number when both are, `a` when they are equal, else the
/// opaque symbol "min(x,y)" (arguments in a canonical order), so that the
/// same minimum computed twice is the same symbol.
Dim DimMin(const Dim& a, const Dim& b);
/// True when, in any run where `a` and `b` broadcast against each other, the
/// result is `b`: a == b, or a is min(b, C) with C a number >= 1 (a slice of
/// a constant buffer by a length, as in mask[:T, :T] against T).
bool BroadcastsInto(const Dim& a, const Dim& b);

}  // namespace attune
