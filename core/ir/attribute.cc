#include "core/ir/attribute.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune {

void Attributes::Erase(std::string_view name) {
  auto it = values_.find(name);
  if (it != values_.end()) values_.erase(it);
}

template <typename T>
absl::StatusOr<T> Attributes::Get(std::string_view name, const char* type_name) const {
  auto it = values_.find(name);
  if (it == values_.end()) return absl::NotFoundError(absl::StrCat("missing attribute ", QuoteName(name)));
  const T* v = std::get_if<T>(&it->second);
  if (v == nullptr)
    return absl::InvalidArgumentError(absl::StrCat("attribute ", QuoteName(name), " is not of type ", type_name));
  return *v;
}

absl::StatusOr<int64_t> Attributes::GetInt(std::string_view name) const { return Get<int64_t>(name, "int"); }
absl::StatusOr<int64_t> Attributes::GetInt(std::string_view name, int64_t default_value) const {
  return Has(name) ? GetInt(name) : default_value;
}
absl::StatusOr<float> Attributes::GetFloat(std::string_view name) const { return Get<float>(name, "float"); }
absl::StatusOr<float> Attributes::GetFloat(std::string_view name, float default_value) const {
  return Has(name) ? GetFloat(name) : default_value;
}
absl::StatusOr<std::string> Attributes::GetString(std::string_view name) const {
  return Get<std::string>(name, "string");
}
absl::StatusOr<std::string> Attributes::GetString(std::string_view name, std::string default_value) const {
  return Has(name) ? GetString(name) : default_value;
}
absl::StatusOr<Tensor> Attributes::GetTensor(std::string_view name) const { return Get<Tensor>(name, "tensor"); }
absl::StatusOr<std::vector<int64_t>> Attributes::GetInts(std::string_view name) const {
  return Get<std::vector<int64_t>>(name, "ints");
}
absl::StatusOr<std::vector<int64_t>> Attributes::GetInts(std::string_view name,
                                                         std::vector<int64_t> default_value) const {
  return Has(name) ? GetInts(name) : default_value;
}
absl::StatusOr<std::vector<float>> Attributes::GetFloats(std::string_view name) const {
  return Get<std::vector<float>>(name, "floats");
}
absl::StatusOr<std::vector<std::string>> Attributes::GetStrings(std::string_view name) const {
  return Get<std::vector<std::string>>(name, "strings");
}

std::string Attributes::ToString() const {
  std::vector<std::string> parts;
  for (const auto& [name, value] : values_) {
    std::string text = std::visit(
        [](const auto& v) -> std::string {
          using V = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<V, int64_t> || std::is_same_v<V, float>) return absl::StrCat(v);
          else if constexpr (std::is_same_v<V, std::string>) return absl::StrCat("\"", v, "\"");
          else if constexpr (std::is_same_v<V, Tensor>) return v.DebugString();
          else if constexpr (std::is_same_v<V, std::vector<std::string>>) return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
          else return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
        },
        value);
    parts.push_back(absl::StrCat(name, "=", text));
  }
  return absl::StrJoin(parts, ", ");
}

}  // namespace attune
