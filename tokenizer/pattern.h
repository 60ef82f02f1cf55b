// A tokenizer.json pattern: {"String": "..."} (a literal) or {"Regex": "..."}
// (PCRE2 in UTF and Unicode-property mode, JIT-compiled). Used by Split,
// Replace and the ByteLevel pre-tokenizer's GPT-2 expression.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace attune::tok {

/// Byte ranges [first, second) of the non-empty matches, left to right.
using MatchRanges = std::vector<std::pair<size_t, size_t>>;

class Pattern {
 public:
  static absl::StatusOr<Pattern> Literal(std::string text);
  static absl::StatusOr<Pattern> Regex(const std::string& expression);
  /// {"String": s} or {"Regex": r}; `where` names the field in errors.
  static absl::StatusOr<Pattern> FromJson(const nlohmann::json& j, std::string_view where);

  Pattern(Pattern&&) noexcept;
  Pattern& operator=(Pattern&&) noexcept;
  ~Pattern();

  /// The matches in valid UTF-8 `text`. An error only if the regex engine
  /// gives up (a match limit), never for the text itself.
  absl::StatusOr<MatchRanges> FindAll(std::string_view text) const;
  /// Every match replaced by `content`.
  absl::StatusOr<std::string> ReplaceAll(std::string_view text, std::string_view content) const;

 private:
  Pattern();
  struct Compiled;
  std::string literal_;
  std::shared_ptr<const Compiled> regex_;  // null for a literal
};

}  // namespace attune::tok
