#include "tokenizer/normalizer.h"

#include <cstdlib>
#include <vector>

#include <utf8proc.h>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "tokenizer/json_fields.h"
#include "tokenizer/pattern.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

// Rewrites every code point with `map` (which appends its replacement).
template <typename Map>
void MapCodePoints(std::string& text, Map map) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) map(out, NextCodePoint(text, i));
  text.swap(out);
}

class UnicodeForm : public Normalizer {
 public:
  explicit UnicodeForm(int options) : options_(options) {}
  absl::Status Normalize(std::string& text) const override {
    if (text.empty()) return absl::OkStatus();
    utf8proc_uint8_t* result = nullptr;
    const utf8proc_ssize_t n =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                     &result, static_cast<utf8proc_option_t>(options_ | UTF8PROC_STABLE));
    if (n < 0) return absl::InvalidArgumentError(absl::StrCat("Unicode normalization failed: ", utf8proc_errmsg(n)));
    text.assign(reinterpret_cast<const char*>(result), static_cast<size_t>(n));
    std::free(result);
    return absl::OkStatus();
  }

 private:
  int options_;
};

class Lowercase : public Normalizer {
 public:
  absl::Status Normalize(std::string& text) const override {
    MapCodePoints(text, [](std::string& out, char32_t cp) {
      AppendUtf8(out, static_cast<char32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))));
    });
    return absl::OkStatus();
  }
};

class StripAccents : public Normalizer {
 public:
  absl::Status Normalize(std::string& text) const override {
    MapCodePoints(text, [](std::string& out, char32_t cp) {
      if (!IsCombiningMark(cp)) AppendUtf8(out, cp);
    });
    return absl::OkStatus();
  }
};

class Replace : public Normalizer {
 public:
  Replace(Pattern pattern, std::string content) : pattern_(std::move(pattern)), content_(std::move(content)) {}
  absl::Status Normalize(std::string& text) const override {
    ASSIGN_OR_RETURN(text, pattern_.ReplaceAll(text, content_));
    return absl::OkStatus();
  }

 private:
  Pattern pattern_;
  std::string content_;
};

class Prepend : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  absl::Status Normalize(std::string& text) const override {
    if (!text.empty()) text.insert(0, prefix_);
    return absl::OkStatus();
  }

 private:
  std::string prefix_;
};

class Strip : public Normalizer {
 public:
  Strip(bool left, bool right) : left_(left), right_(right) {}
  absl::Status Normalize(std::string& text) const override {
    size_t begin = 0, end = text.size();
    if (left_) {
      for (size_t i = 0; i < text.size() && IsWhitespace(NextCodePoint(text, i));) begin = i;
    }
    if (right_) {
      end = begin;
      for (size_t i = begin; i < text.size();)
        if (!IsWhitespace(NextCodePoint(text, i))) end = i;
    }
    text = text.substr(begin, end - begin);
    return absl::OkStatus();
  }

 private:
  bool left_, right_;
};

// BERT's: control characters dropped and whitespace made ' ', CJK characters
// padded with spaces, then optionally accents stripped (after NFD) and lowercase.
class BertNormalizer : public Normalizer {
 public:
  BertNormalizer(bool clean, bool chinese, bool strip_accents, bool lowercase)
      : clean_(clean), chinese_(chinese), strip_accents_(strip_accents), lowercase_(lowercase) {}
  absl::Status Normalize(std::string& text) const override {
    MapCodePoints(text, [&](std::string& out, char32_t cp) {
      if (clean_ && (cp == 0 || cp == 0xFFFD || IsControl(cp))) return;
      if (clean_ && IsWhitespace(cp)) cp = ' ';
      const bool pad = chinese_ && IsChineseChar(cp);
      if (pad) out.push_back(' ');
      AppendUtf8(out, cp);
      if (pad) out.push_back(' ');
    });
    if (strip_accents_) {
      RETURN_IF_ERROR(UnicodeForm(UTF8PROC_DECOMPOSE).Normalize(text));
      RETURN_IF_ERROR(StripAccents().Normalize(text));
    }
    if (lowercase_) RETURN_IF_ERROR(Lowercase().Normalize(text));
    return absl::OkStatus();
  }

 private:
  bool clean_, chinese_, strip_accents_, lowercase_;
};

// SentencePiece's compiled rules as SentencePiece applies them: at each
// position the longest rule whose key starts there, else one character as it
// is. (Hugging Face's tokenizers instead replace a whole grapheme cluster
// shorter than 6 bytes by its shortest rule, which differs from SentencePiece
// on a few clusters, such as half-width katakana with a voiced mark or a
// letter with two combining marks; SentencePiece's ids are the ones kept.)
class Precompiled : public Normalizer {
 public:
  explicit Precompiled(PrecompiledCharsMap map) : map_(std::move(map)) {}
  absl::Status Normalize(std::string& text) const override {
    std::string out;
    out.reserve(text.size() + text.size() / 4);
    const std::string_view all(text);
    for (size_t pos = 0; pos < all.size();) {
      ASSIGN_OR_RETURN(const PrecompiledCharsMap::Match match, map_.Find(all.substr(pos), /*longest=*/true));
      if (match.length > 0) {
        out.append(match.replacement);
        pos += match.length;
      } else {
        const size_t len = Utf8Length(static_cast<unsigned char>(all[pos]));
        out.append(all.substr(pos, len));
        pos += len;
      }
    }
    text.swap(out);
    return absl::OkStatus();
  }

 private:
  PrecompiledCharsMap map_;
};

class SequenceNormalizer : public Normalizer {
 public:
  explicit SequenceNormalizer(std::vector<std::unique_ptr<Normalizer>> parts) : parts_(std::move(parts)) {}
  absl::Status Normalize(std::string& text) const override {
    for (const auto& part : parts_) RETURN_IF_ERROR(part->Normalize(text));
    return absl::OkStatus();
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> parts_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Normalizer>> MakeNormalizer(const nlohmann::json& j) {
  ASSIGN_OR_RETURN(const std::string type, TypeOf(j, "normalizer"));
  if (type == "NFC") return std::make_unique<UnicodeForm>(UTF8PROC_COMPOSE);
  if (type == "NFD") return std::make_unique<UnicodeForm>(UTF8PROC_DECOMPOSE);
  if (type == "NFKC") return std::make_unique<UnicodeForm>(UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
  if (type == "NFKD") return std::make_unique<UnicodeForm>(UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "StripAccents") return std::make_unique<StripAccents>();
  if (type == "Replace") {
    ASSIGN_OR_RETURN(Pattern pattern, Pattern::FromJson(j.value("pattern", nlohmann::json()), "normalizer Replace"));
    ASSIGN_OR_RETURN(std::string content, StringField(j, "content", "normalizer Replace"));
    return std::make_unique<Replace>(std::move(pattern), std::move(content));
  }
  if (type == "Prepend") {
    ASSIGN_OR_RETURN(std::string prefix, StringField(j, "prepend", "normalizer Prepend"));
    return std::make_unique<Prepend>(std::move(prefix));
  }
  if (type == "Strip") return std::make_unique<Strip>(BoolField(j, "strip_left", true), BoolField(j, "strip_right", true));
  if (type == "BertNormalizer") {
    const bool lowercase = BoolField(j, "lowercase", true);
    // strip_accents null follows lowercase, as BERT's uncased models expect.
    const bool strip = j.contains("strip_accents") && j["strip_accents"].is_boolean() ? j["strip_accents"].get<bool>()
                                                                                      : lowercase;
    return std::make_unique<BertNormalizer>(BoolField(j, "clean_text", true), BoolField(j, "handle_chinese_chars", true),
                                            strip, lowercase);
  }
  if (type == "Precompiled") {
    ASSIGN_OR_RETURN(const std::string encoded, StringField(j, "precompiled_charsmap", "normalizer Precompiled"));
    std::string blob;
    if (!absl::Base64Unescape(encoded, &blob))
      return absl::InvalidArgumentError("normalizer Precompiled: \"precompiled_charsmap\" is not base64");
    // An empty map (the "identity" rule) changes nothing.
    if (blob.empty()) return std::make_unique<SequenceNormalizer>(std::vector<std::unique_ptr<Normalizer>>());
    ASSIGN_OR_RETURN(PrecompiledCharsMap map, PrecompiledCharsMap::FromBlob(blob));
    return std::make_unique<Precompiled>(std::move(map));
  }
  if (type == "Sequence") {
    if (!j.contains("normalizers") || !j["normalizers"].is_array())
      return absl::InvalidArgumentError("normalizer Sequence: \"normalizers\" must be an array");
    std::vector<std::unique_ptr<Normalizer>> parts;
    for (const auto& part : j["normalizers"]) {
      ASSIGN_OR_RETURN(auto n, MakeNormalizer(part));
      parts.push_back(std::move(n));
    }
    return std::make_unique<SequenceNormalizer>(std::move(parts));
  }
  return absl::UnimplementedError(absl::StrCat("unsupported normalizer type ", Quoted(type), ""));
}

}  // namespace attune::tok
