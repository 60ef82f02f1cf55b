#include "core/ir/dim.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace attune {

Dim Dim::FromSymbolic(DimExpr expr) {
  Dim d;
  std::string text = expr.ToString();
  d.symbolic_ = std::make_shared<const Symbolic>(Symbolic{std::move(expr), std::move(text)});
  return d;
}

Dim Dim::Symbol(std::string_view text) {
  if (text.empty()) return Dim();
  std::optional<DimExpr> parsed = ParseDimExpr(text);
  if (parsed && !parsed->is_constant()) return FromSymbolic(*std::move(parsed));
  return Named(std::string(text));
}

Dim Dim::Named(std::string name) {
  if (name.empty()) return Dim();
  return FromSymbolic(DimExpr::Symbol(std::move(name)));
}

Dim Dim::FromExpr(DimExpr expr) {
  if (expr.is_constant()) return Known(expr.constant_value());
  return FromSymbolic(std::move(expr));
}

const std::string& Dim::symbol() const {
  static const std::string kNone;
  return symbolic_ ? symbolic_->text : kNone;
}

std::optional<DimExpr> Dim::AsExpr() const {
  if (is_known()) return DimExpr::Constant(value_);
  if (is_symbol()) return symbolic_->expr;
  return std::nullopt;
}

std::string Dim::ToString() const {
  if (is_known()) return absl::StrCat(value_);
  if (is_symbol()) return symbolic_->text;
  return "?";
}

bool Dim::operator==(const Dim& other) const {
  if (is_known() && other.is_known()) return value_ == other.value_;
  if (is_symbol() && other.is_symbol()) return symbolic_ == other.symbolic_ || symbolic_->expr == other.symbolic_->expr;
  return false;
}

std::string SymbolicShapeToString(const SymbolicShape& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", ", [](std::string* out, const Dim& d) { out->append(d.ToString()); }),
                      "]");
}

bool IsStatic(const SymbolicShape& shape) {
  for (const Dim& d : shape)
    if (!d.is_known()) return false;
  return true;
}

std::vector<int64_t> StaticDims(const SymbolicShape& shape) {
  std::vector<int64_t> dims;
  for (const Dim& d : shape) dims.push_back(d.is_known() ? d.value() : -1);
  return dims;
}

SymbolicShape ShapeFromDims(const std::vector<int64_t>& dims) {
  SymbolicShape s;
  for (int64_t d : dims) s.push_back(Dim::Known(d));
  return s;
}

}  // namespace attune
