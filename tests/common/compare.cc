#include "tests/common/compare.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/ir/narrow_types.h"

namespace attune::testing {
namespace {

// Every element as double so one loop serves all numeric types.
double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.type()) {
    case ElementType::kFloat32: return t.data<float>()[i];
    case ElementType::kFloat64: return t.data<double>()[i];
    case ElementType::kFloat16: return HalfToFloat(t.data<Float16>()[i]);
    case ElementType::kBFloat16: return BFloat16ToFloat(t.data<BFloat16>()[i]);
    case ElementType::kInt8: return t.data<int8_t>()[i];
    case ElementType::kUint8: return t.data<uint8_t>()[i];
    case ElementType::kInt16: return t.data<int16_t>()[i];
    case ElementType::kUint16: return t.data<uint16_t>()[i];
    case ElementType::kInt32: return t.data<int32_t>()[i];
    case ElementType::kUint32: return t.data<uint32_t>()[i];
    case ElementType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case ElementType::kUint64: return static_cast<double>(t.data<uint64_t>()[i]);
    case ElementType::kBool: return t.data<uint8_t>()[i] != 0;
    default:
      if (IsNarrowType(t.type())) return NarrowToFloat(t.type(), t.data<uint8_t>()[i]);
      return std::nan("");
  }
}

}  // namespace

std::string CompareTensors(const Tensor& actual, const Tensor& expected, Tolerance tolerance) {
  if (actual.type() != expected.type())
    return absl::StrCat("element type ", ElementTypeName(actual.type()), " != expected ",
                        ElementTypeName(expected.type()));
  if (actual.shape() != expected.shape())
    return absl::StrCat("shape ", ShapeToString(actual.shape()), " != expected ", ShapeToString(expected.shape()));
  for (int64_t i = 0; i < actual.num_elements(); ++i) {
    const double a = ElementAsDouble(actual, i);
    const double e = ElementAsDouble(expected, i);
    if (std::isnan(a) && std::isnan(e)) continue;
    if (std::isinf(e) && a == e) continue;
    const bool ok = std::fabs(a - e) <= tolerance.atol + tolerance.rtol * std::fabs(e);
    if (!ok) return absl::StrCat("element ", i, ": got ", a, ", expected ", e);
  }
  return "";
}

double MaxAbsDifference(const Tensor& a, const Tensor& b) {
  double worst = 0;
  if (a.shape() != b.shape()) return INFINITY;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double d = std::fabs(ElementAsDouble(a, i) - ElementAsDouble(b, i));
    if (std::isnan(d)) return INFINITY;
    worst = std::max(worst, d);
  }
  return worst;
}

}  // namespace attune::testing
