// A dimension of a symbolic shape: a known number or a named symbol ("batch", "seq").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace attune {

class Dim {
 public:
  Dim() = default;  // an unknown dimension (no name, no value)
  static Dim Known(int64_t value) { Dim d; d.value_ = value; return d; }
  static Dim Symbol(std::string name) { Dim d; d.symbol_ = std::move(name); return d; }

  bool is_known() const { return value_.has_value(); }
  bool is_symbol() const { return !symbol_.empty(); }
  /// Neither a number nor a symbol: nothing is known about it.
  bool is_unknown() const { return !is_known() && !is_symbol(); }
  int64_t value() const { return *value_; }
  const std::string& symbol() const { return symbol_; }
  /// "4", "seq" or "?".
  std::string ToString() const;

  /// Known dims equal by value, symbols by name; unknown equals nothing.
  bool operator==(const Dim& other) const;

 private:
  std::optional<int64_t> value_;
  std::string symbol_;
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
