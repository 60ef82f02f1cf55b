#include "server/datatype.h"

#include <array>
#include <utility>

namespace attune::server {
namespace {

constexpr std::array<std::pair<ElementType, std::string_view>, 14> kNames{{
    {ElementType::kBool, "BOOL"},
    {ElementType::kUint8, "UINT8"},
    {ElementType::kUint16, "UINT16"},
    {ElementType::kUint32, "UINT32"},
    {ElementType::kUint64, "UINT64"},
    {ElementType::kInt8, "INT8"},
    {ElementType::kInt16, "INT16"},
    {ElementType::kInt32, "INT32"},
    {ElementType::kInt64, "INT64"},
    {ElementType::kFloat16, "FP16"},
    {ElementType::kFloat32, "FP32"},
    {ElementType::kFloat64, "FP64"},
    {ElementType::kBFloat16, "BF16"},
    {ElementType::kString, "BYTES"},
}};

}  // namespace

std::string DatatypeName(ElementType type) {
  for (const auto& [t, name] : kNames)
    if (t == type) return std::string(name);
  return "";
}

std::optional<ElementType> ParseDatatype(std::string_view name) {
  for (const auto& [t, n] : kNames)
    if (n == name) return t;
  return std::nullopt;
}

}  // namespace attune::server
