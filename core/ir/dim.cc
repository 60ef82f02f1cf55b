#include "core/ir/dim.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace attune {

std::string Dim::ToString() const {
  if (is_known()) return absl::StrCat(*value_);
  if (is_symbol()) return symbol_;
  return "?";
}

bool Dim::operator==(const Dim& other) const {
  if (is_known() && other.is_known()) return value_ == other.value_;
  if (is_symbol() && other.is_symbol()) return symbol_ == other.symbol_;
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
