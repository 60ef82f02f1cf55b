// A dimension of a symbolic shape: a known number, a symbol ("batch", "seq",
// "past+seq", "min(64,seq)") held as a DimExpr, or unknown.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ir/dim_expr.h"

namespace attune {

class Dim {
 public:
  Dim() = default;  // an unknown dimension (no name, no value)
  static Dim Known(int64_t value) {
    Dim d;
    d.known_ = true;
    d.value_ = value;
    return d;
  }
  /// A symbol written as text (an ONNX dim_param, a test's shape): read as an
  /// expression when it spells one ("past + seq", "12*seq"), else one name
  /// ("unk__/Range_out_0"). Text that spells a number is a name too, as ONNX
  /// has it. Empty text is an unknown dim.
  static Dim Symbol(std::string_view text);
  /// A symbol that is one name whatever its characters (a name made from a
  /// value's name is never read as an expression). Empty is unknown.
  static Dim Named(std::string name);
  /// A number when `expr` is constant, else the symbol it is.
  static Dim FromExpr(DimExpr expr);

  bool is_known() const { return known_; }
  bool is_symbol() const { return symbolic_ != nullptr; }
  /// Neither a number nor a symbol: nothing is known about it.
  bool is_unknown() const { return !is_known() && !is_symbol(); }
  int64_t value() const { return value_; }
  /// The symbol's canonical text (DimExpr::ToString): "past+seq" however it
  /// was written; empty for a number or an unknown dim.
  const std::string& symbol() const;
  /// The symbol's expression; nullptr for a number or an unknown dim.
  const DimExpr* expr() const { return symbolic_ ? &symbolic_->expr : nullptr; }
  /// A number or a symbol as an expression; nullopt when unknown.
  std::optional<DimExpr> AsExpr() const;
  /// "4", "seq" or "?".
  std::string ToString() const;

  /// Known dims equal by value, symbols by expression ("seq+past" ==
  /// "past+seq"); unknown equals nothing.
  bool operator==(const Dim& other) const;

 private:
  // Shared and immutable: copying a Dim copies a pointer.
  struct Symbolic {
    DimExpr expr;
    std::string text;
  };
  static Dim FromSymbolic(DimExpr expr);

  std::shared_ptr<const Symbolic> symbolic_;
  int64_t value_ = 0;
  bool known_ = false;
};

/// A shape whose dimensions may be symbolic; std::nullopt rank means unknown rank.
using SymbolicShape = std::vector<Dim>;

/// "[batch, seq, 64]".
std::string SymbolicShapeToString(const SymbolicShape& shape);
/// All dims known.
bool IsStatic(const SymbolicShape& shape);
/// The numbers of a static shape.
std::vector<int64_t> StaticDims(const SymbolicShape& shape);
SymbolicShape ShapeFromDims(const std::vector<int64_t>& dims);

}  // namespace attune
