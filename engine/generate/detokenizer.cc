#include "engine/generate/detokenizer.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "nlohmann/json.hpp"
#include "tokenizer/utf8.h"

namespace attune {
namespace {

// Code points of a UTF-8 string (an invalid byte becomes U+FFFD).
std::vector<char32_t> CodePoints(const std::string& s) {
  const std::string text = tok::FindInvalidUtf8(s) == std::string::npos ? s : tok::LossyUtf8(s);
  std::vector<char32_t> out;
  for (size_t pos = 0; pos < text.size();) out.push_back(tok::NextCodePoint(text, pos));
  return out;
}

// <0x0A> -> 10, else -1 (SentencePiece's byte fallback tokens).
int ByteFallback(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  int value = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = token[i];
    const int d = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
    if (d < 0) return -1;
    value = value * 16 + d;
  }
  return value;
}

// The decoder of a tokenizer.json: ByteLevel anywhere in it means byte-level;
// Metaspace, ByteFallback or a Replace of U+2581 means SentencePiece.
Detokenizer::Mode ModeOf(const nlohmann::json& decoder) {
  if (!decoder.is_object()) return Detokenizer::Mode::kPlain;
  const std::string dump = decoder.dump();
  if (dump.find("\"ByteLevel\"") != std::string::npos) return Detokenizer::Mode::kByteLevel;
  if (dump.find("\"Metaspace\"") != std::string::npos || dump.find("\"ByteFallback\"") != std::string::npos ||
      dump.find("\xE2\x96\x81") != std::string::npos || dump.find("\\u2581") != std::string::npos)
    return Detokenizer::Mode::kMetaspace;
  return Detokenizer::Mode::kPlain;
}

}  // namespace

Detokenizer Detokenizer::FromVocab(const std::unordered_map<std::string, int64_t>& vocab, Mode mode) {
  Detokenizer d;
  d.mode_ = mode;
  for (const auto& [token, id] : vocab) {
    if (id < 0 || id > (int64_t{1} << 24)) continue;
    if (id >= d.size()) {
      d.tokens_.resize(id + 1);
      d.special_.resize(id + 1, false);
    }
    d.tokens_[id] = token;
  }
  return d;
}

absl::StatusOr<Detokenizer> Detokenizer::Load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read vocabulary ", QuoteName(path)));
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return absl::InvalidArgumentError(absl::StrCat("vocabulary ", QuoteName(path), " is not a JSON object"));
  std::unordered_map<std::string, int64_t> vocab;
  Mode mode = Mode::kByteLevel;  // a bare vocab.json is GPT-2's
  std::vector<std::pair<int64_t, std::string>> added;
  if (j.contains("model") && j["model"].is_object()) {
    const nlohmann::json& v = j["model"].value("vocab", nlohmann::json());
    if (v.is_object()) {
      for (const auto& [token, id] : v.items())
        if (id.is_number_integer()) vocab[token] = id.get<int64_t>();
    } else if (v.is_array()) {  // Unigram: [[token, score], ...], the id is the index
      for (size_t i = 0; i < v.size(); ++i)
        if (v[i].is_array() && !v[i].empty() && v[i][0].is_string()) vocab[v[i][0].get<std::string>()] = i;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("vocabulary ", QuoteName(path), " has no model.vocab"));
    }
    mode = ModeOf(j.value("decoder", nlohmann::json()));
    if (j.contains("added_tokens") && j["added_tokens"].is_array())
      for (const auto& t : j["added_tokens"])
        if (t.is_object() && t.value("id", nlohmann::json()).is_number_integer() &&
            t.value("content", nlohmann::json()).is_string())
          added.emplace_back(t["id"].get<int64_t>(), t["content"].get<std::string>());
  } else {
    for (const auto& [token, id] : j.items())
      if (id.is_number_integer()) vocab[token] = id.get<int64_t>();
  }
  if (vocab.empty()) return absl::InvalidArgumentError(absl::StrCat("vocabulary ", QuoteName(path), " has no tokens"));
  Detokenizer d = FromVocab(vocab, mode);
  for (const auto& [id, content] : added) {
    if (id < 0 || id > (int64_t{1} << 24)) continue;
    if (id >= d.size()) {
      d.tokens_.resize(id + 1);
      d.special_.resize(id + 1, false);
    }
    d.tokens_[id] = content;
    d.special_[id] = true;
  }
  return d;
}

std::string Detokenizer::TokenBytes(int64_t id) const {
  if (id < 0 || id >= size() || tokens_[id].empty()) return absl::StrCat("<", id, "?>");
  const std::string& token = tokens_[id];
  if (special_[id] || mode_ == Mode::kPlain) return token;
  std::string out;
  if (mode_ == Mode::kByteLevel) {
    for (char32_t cp : CodePoints(token)) {
      const int byte = tok::ByteLevelByte(cp);
      if (byte >= 0) {
        out.push_back(static_cast<char>(byte));
      } else {
        tok::AppendUtf8(out, cp);  // not from the byte table: keep the character
      }
    }
    return out;
  }
  const int byte = ByteFallback(token);
  if (byte >= 0) return std::string(1, static_cast<char>(byte));
  for (char32_t cp : CodePoints(token)) tok::AppendUtf8(out, cp == 0x2581 ? U' ' : cp);
  return out;
}

std::string Detokenizer::Decode(std::span<const int64_t> ids) const {
  std::string out;
  for (int64_t id : ids) out += TokenBytes(id);
  return out;
}

}  // namespace attune
