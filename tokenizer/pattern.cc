#include "tokenizer/pattern.h"
#include "core/common/strings.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/utf8.h"

namespace attune::tok {

struct Pattern::Compiled {
  pcre2_code* code = nullptr;
  bool jit = false;
  ~Compiled() { pcre2_code_free(code); }
};

namespace {

// One match-data block per thread, grown to the largest pattern used: the
// compiled patterns are shared, the scratch is not.
pcre2_match_data* ThreadMatchData() {
  struct Holder {
    pcre2_match_data* data = pcre2_match_data_create(1, nullptr);
    ~Holder() { pcre2_match_data_free(data); }
  };
  thread_local Holder holder;
  return holder.data;
}

}  // namespace

Pattern::Pattern() = default;
Pattern::Pattern(Pattern&&) noexcept = default;
Pattern& Pattern::operator=(Pattern&&) noexcept = default;
Pattern::~Pattern() = default;

absl::StatusOr<Pattern> Pattern::Literal(std::string text) {
  Pattern p;
  p.literal_ = std::move(text);
  return p;
}

absl::StatusOr<Pattern> Pattern::Regex(const std::string& expression) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(expression.data()), expression.size(),
                                   PCRE2_UTF | PCRE2_UCP | PCRE2_NO_UTF_CHECK, &error, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    return absl::InvalidArgumentError(absl::StrCat("regex ", Quoted(expression), " does not compile at offset ", offset,
                                                   ": ", reinterpret_cast<const char*>(message)));
  }
  auto compiled = std::make_shared<Compiled>();
  compiled->code = code;
  compiled->jit = pcre2_jit_compile(code, PCRE2_JIT_COMPLETE) == 0;
  Pattern p;
  p.regex_ = std::move(compiled);
  return p;
}

absl::StatusOr<Pattern> Pattern::FromJson(const nlohmann::json& j, std::string_view where) {
  if (j.is_object() && j.contains("String") && j["String"].is_string()) return Literal(j["String"].get<std::string>());
  if (j.is_object() && j.contains("Regex") && j["Regex"].is_string()) {
    auto p = Regex(j["Regex"].get<std::string>());
    if (!p.ok()) return absl::InvalidArgumentError(absl::StrCat(Sv(where), ": ", p.status().message()));
    return p;
  }
  return absl::InvalidArgumentError(absl::StrCat(Sv(where), ": pattern must be {\"String\": ...} or {\"Regex\": ...}"));
}

absl::StatusOr<MatchRanges> Pattern::FindAll(std::string_view text) const {
  MatchRanges out;
  if (!regex_) {
    if (literal_.empty()) return out;
    for (size_t at = text.find(literal_); at != std::string_view::npos; at = text.find(literal_, at + literal_.size()))
      out.emplace_back(at, at + literal_.size());
    return out;
  }
  pcre2_match_data* data = ThreadMatchData();
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t start = 0;
  while (start <= text.size()) {
    const int rc = regex_->jit ? pcre2_jit_match(regex_->code, subject, text.size(), start, 0, data, nullptr)
                               : pcre2_match(regex_->code, subject, text.size(), start, PCRE2_NO_UTF_CHECK, data, nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) break;
    if (rc < 0) return absl::ResourceExhaustedError(absl::StrCat("regex match failed (PCRE2 error ", rc, ")"));
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    const size_t begin = ovector[0], end = ovector[1];
    if (end > begin) {
      out.emplace_back(begin, end);
      start = end;
    } else {
      // An empty match: step over one whole character.
      if (begin >= text.size()) break;
      start = begin + Utf8Length(static_cast<unsigned char>(text[begin]));
    }
  }
  return out;
}

absl::StatusOr<std::string> Pattern::ReplaceAll(std::string_view text, std::string_view content) const {
  auto matches = FindAll(text);
  if (!matches.ok()) return matches.status();
  std::string out;
  out.reserve(text.size());
  size_t last = 0;
  for (const auto& [begin, end] : *matches) {
    out.append(text.substr(last, begin - last));
    out.append(content);
    last = end;
  }
  out.append(text.substr(last));
  return out;
}

}  // namespace attune::tok
