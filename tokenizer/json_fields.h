// Typed reads of tokenizer.json fields that name the component in errors.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/common/strings.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "nlohmann/json.hpp"

namespace attune::tok {

/// A string from the file, in double quotes, its control characters escaped
/// (error messages are one line).
inline std::string Quoted(std::string_view text) { return "\"" + EscapeControl(text) + "\""; }

/// The "type" of a component object (`what` = "normalizer", "decoder", ...).
inline absl::StatusOr<std::string> TypeOf(const nlohmann::json& j, std::string_view what) {
  if (!j.is_object()) return absl::InvalidArgumentError(absl::StrCat(Sv(what), " must be an object"));
  auto it = j.find("type");
  if (it == j.end() || !it->is_string())
    return absl::InvalidArgumentError(absl::StrCat(Sv(what), " has no \"type\" string"));
  return it->get<std::string>();
}

inline absl::StatusOr<std::string> StringField(const nlohmann::json& j, const char* key, std::string_view where) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_string())
    return absl::InvalidArgumentError(absl::StrCat(Sv(where), ": \"", key, "\" must be a string"));
  return it->get<std::string>();
}

/// A string field that may be absent or null (then `fallback`).
inline std::string OptionalString(const nlohmann::json& j, const char* key, std::string fallback = "") {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : fallback;
}

inline bool BoolField(const nlohmann::json& j, const char* key, bool fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

inline int64_t IntField(const nlohmann::json& j, const char* key, int64_t fallback) {
  auto it = j.find(key);
  return it != j.end() && it->is_number_integer() ? it->get<int64_t>() : fallback;
}

}  // namespace attune::tok
