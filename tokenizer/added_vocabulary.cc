#include "tokenizer/added_vocabulary.h"
#include "core/common/strings.h"

#include <utf8proc.h>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/normalizer.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

bool IsWordChar(char32_t cp) {
  if (cp == '_') return true;
  const auto c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

// The code point that ends text[0, end).
char32_t LastCodePoint(std::string_view text, size_t end) {
  size_t begin = end - 1;
  while (begin > 0 && (static_cast<unsigned char>(text[begin]) & 0xC0) == 0x80) --begin;
  return NextCodePoint(text, begin);
}

}  // namespace

void AddedVocabulary::Trie::Add(std::string_view key, int32_t index) {
  int32_t node = 0;
  for (unsigned char c : key) {
    auto [it, inserted] = edges.try_emplace((uint64_t{static_cast<uint32_t>(node)} << 8) | c,
                                            static_cast<int32_t>(token.size()));
    if (inserted) token.push_back(-1);
    node = it->second;
  }
  token[node] = index;
}

std::pair<size_t, int32_t> AddedVocabulary::Trie::Longest(std::string_view text, size_t pos) const {
  std::pair<size_t, int32_t> best{0, -1};
  int32_t node = 0;
  for (size_t i = pos; i < text.size();) {
    auto it = edges.find((uint64_t{static_cast<uint32_t>(node)} << 8) | static_cast<unsigned char>(text[i++]));
    if (it == edges.end()) break;
    node = it->second;
    if (token[node] >= 0) best = {i, token[node]};
  }
  return best;
}

absl::Status AddedVocabulary::Load(const nlohmann::json& added_tokens, const Normalizer* normalizer) {
  if (added_tokens.is_null()) return absl::OkStatus();
  if (!added_tokens.is_array()) return absl::InvalidArgumentError("\"added_tokens\" must be an array");
  for (const auto& t : added_tokens) {
    AddedToken token;
    ASSIGN_OR_RETURN(token.content, StringField(t, "content", "added_tokens"));
    const int64_t id = IntField(t, "id", -1);
    if (id < 0 || id >= (int64_t{1} << 26))
      return absl::InvalidArgumentError(absl::StrCat("added token ", Quoted(token.content), " has no valid \"id\""));
    if (token.content.empty()) return absl::InvalidArgumentError(absl::StrCat("added token ", id, " is empty"));
    token.id = static_cast<int32_t>(id);
    token.special = BoolField(t, "special", false);
    token.single_word = BoolField(t, "single_word", false);
    token.lstrip = BoolField(t, "lstrip", false);
    token.rstrip = BoolField(t, "rstrip", false);
    token.normalized = BoolField(t, "normalized", !token.special);
    const auto index = static_cast<int32_t>(tokens_.size());
    by_content_.emplace(token.content, token.id);
    by_id_.insert_or_assign(token.id, index);
    if (token.normalized && normalizer != nullptr) {
      std::string key = token.content;
      RETURN_IF_ERROR(normalizer->Normalize(key));
      if (!key.empty()) normalized_.Add(key, index);
    } else if (token.normalized) {
      normalized_.Add(token.content, index);
    } else {
      raw_.Add(token.content, index);
    }
    tokens_.push_back(std::move(token));
  }
  return absl::OkStatus();
}

void AddedVocabulary::SplitOne(const TextPart& part, const Trie& trie, std::vector<TextPart>& out) const {
  const std::string& text = part.text;
  size_t emitted = 0;  // text before this offset is written out
  auto emit_text = [&](size_t end) {
    if (end > emitted) out.push_back({text.substr(emitted, end - emitted), -1, part.at_start && emitted == 0});
  };
  for (size_t pos = 0; pos < text.size();) {
    auto [end, index] = trie.Longest(text, pos);
    if (index < 0) {
      pos += Utf8Length(static_cast<unsigned char>(text[pos]));
      continue;
    }
    const AddedToken& token = tokens_[index];
    if (token.single_word && ((pos > 0 && IsWordChar(LastCodePoint(text, pos))) ||
                              (end < text.size() && [&] { size_t e = end; return IsWordChar(NextCodePoint(text, e)); }()))) {
      pos += Utf8Length(static_cast<unsigned char>(text[pos]));
      continue;
    }
    size_t start = pos;
    if (token.lstrip)
      while (start > emitted && IsWhitespace(LastCodePoint(text, start))) {
        do --start;
        while ((static_cast<unsigned char>(text[start]) & 0xC0) == 0x80);
      }
    if (token.rstrip)
      for (size_t e = end; e < text.size() && IsWhitespace(NextCodePoint(text, e));) end = e;
    emit_text(start);
    out.push_back({text.substr(start, end - start), token.id, part.at_start && start == 0});
    emitted = pos = end;
  }
  emit_text(text.size());
}

void AddedVocabulary::Split(std::vector<TextPart>& parts, bool normalized) const {
  const Trie& trie = normalized ? normalized_ : raw_;
  if (trie.empty()) return;
  std::vector<TextPart> out;
  for (const TextPart& part : parts) {
    if (part.id >= 0)
      out.push_back(part);
    else
      SplitOne(part, trie, out);
  }
  parts.swap(out);
}

std::optional<int32_t> AddedVocabulary::TokenToId(std::string_view content) const {
  auto it = by_content_.find(Sv(content));
  if (it == by_content_.end()) return std::nullopt;
  return it->second;
}

const AddedToken* AddedVocabulary::ById(int32_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? nullptr : &tokens_[it->second];
}

}  // namespace attune::tok
