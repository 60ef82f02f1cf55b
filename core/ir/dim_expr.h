// A symbolic dimension as a value: an integer polynomial over atoms, where an
// atom is a named symbol ("seq", "unk__/Range_out_0") or the minimum of two
// polynomials ("min(64,seq)"). Text becomes a DimExpr in one place
// (ParseDimExpr) and a DimExpr becomes text in one place (ToString), so that
// shape rules compare, combine and evaluate dims by meaning, not by spelling.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune {

class DimExpr;
struct DimMinArguments;

/// A factor of a DimExpr that is not a number.
class DimAtom {
 public:
  /// One symbol, whatever its characters (never read as an expression).
  static DimAtom Named(std::string name);

  bool is_min() const { return min_ != nullptr; }
  /// The name, or "min(x,y)" for a minimum: what a binding knows the atom by.
  const std::string& text() const { return text_; }
  /// A name the grammar reads as one bare symbol ("seq", not "unk__/x" or a minimum).
  bool is_identifier() const;
  /// The arguments of a minimum, the one whose text sorts first as `first`.
  const DimExpr& min_first() const;
  const DimExpr& min_second() const;
  /// How many minimums nest in this atom (0 for a name).
  int nesting() const { return nesting_; }

  bool operator==(const DimAtom& other) const;
  bool operator<(const DimAtom& other) const;

 private:
  friend class DimExpr;
  std::string text_;
  std::shared_ptr<const DimMinArguments> min_;
  int nesting_ = 0;
};

/// An integer polynomial over atoms in a canonical form: equal polynomials
/// have equal terms and print the same text.
class DimExpr {
 public:
  /// Sorted atom factors; empty for the constant term.
  using Monomial = std::vector<DimAtom>;

  DimExpr() = default;  // zero
  static DimExpr Constant(int64_t value);
  static DimExpr Atom(DimAtom atom);
  static DimExpr Symbol(std::string name) { return Atom(DimAtom::Named(std::move(name))); }
  /// min(a, b): the smaller number when both are numbers, `a` when b - a has
  /// no negative coefficient (a == b, or min(seq, past+seq): atoms are dims,
  /// never negative), `b` when a - b has none, else one atom with the
  /// arguments in a canonical order. A minimum nested deeper than
  /// kMaxNesting is kept as a name (its text), so that printing, comparing
  /// and evaluating never recurse without bound.
  static DimExpr Min(const DimExpr& a, const DimExpr& b);
  static constexpr int kMaxNesting = 16;

  bool is_constant() const;
  /// The value of a constant expression (0 for the zero polynomial).
  int64_t constant_value() const;
  /// The term without atoms (the value when every atom is 0).
  int64_t constant_term() const;
  /// True when no coefficient is negative: with dims >= 0 the value is >= 0.
  bool IsNonNegative() const;
  /// The atom when the expression is that atom alone (coefficient 1).
  const DimAtom* single_atom() const;
  /// The deepest nesting of minimums among the atoms.
  int nesting() const;
  const std::map<Monomial, int64_t>& terms() const { return terms_; }

  /// "past+seq", "12*batch*seq", "batch*(unk__/Range_out_0)", "min(64,seq)":
  /// terms with atoms first (in atom order), the constant last; an atom that
  /// is not an identifier is parenthesised inside a product or sum, and
  /// printed as itself when it is the whole expression.
  std::string ToString() const;
  /// As ToString, with each named atom printed as `rename(name)`. Terms keep
  /// the order of the original names; `rename` is called in print order.
  std::string ToString(const std::function<std::string(const std::string& name)>& rename) const;

  /// The value with each atom's value from `lookup` (by its text); a minimum
  /// the lookup does not know is the minimum of its arguments' values.
  /// nullopt when an atom has no value or on int64 overflow.
  std::optional<int64_t> Evaluate(const std::function<std::optional<int64_t>(const std::string& text)>& lookup) const;

  bool operator==(const DimExpr& other) const { return terms_ == other.terms_; }
  bool operator<(const DimExpr& other) const { return terms_ < other.terms_; }

  // Arithmetic; nullopt on int64 overflow of a coefficient.
  static std::optional<DimExpr> Add(const DimExpr& a, const DimExpr& b);
  static std::optional<DimExpr> Sub(const DimExpr& a, const DimExpr& b);
  static std::optional<DimExpr> Mul(const DimExpr& a, const DimExpr& b);
  /// a / b when b is a non-zero monomial dividing every term of a exactly.
  static std::optional<DimExpr> DivExact(const DimExpr& a, const DimExpr& b);

 private:
  std::map<Monomial, int64_t> terms_;  // no zero coefficients
};

struct DimMinArguments {
  DimExpr first, second;
};

/// The expression `text` spells in the grammar ToString prints, or nullopt
/// when it is not one (the caller keeps such text as one name):
///   expr := ['-'] term (('+'|'-') term)*     term := factor ('*' factor)*
///   factor := integer | identifier | 'min(' expr ',' expr ')' | '(' text ')'
/// A parenthesised text is one atom: the atom it spells when it spells one
/// ("(min(64,seq))", "(seq)"), else a name ("(unk__/Range_out_0)"). Spaces
/// between tokens are skipped. Nesting deeper than DimExpr::kMaxNesting,
/// integers beyond int64 and coefficient overflow are not expressions.
std::optional<DimExpr> ParseDimExpr(std::string_view text);

/// Letters, digits and '_', not starting with a digit: a name the grammar
/// reads as one symbol.
bool IsIdentifier(std::string_view text);

}  // namespace attune
