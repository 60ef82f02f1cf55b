#include "tokenizer/sentencepiece_normalizer.h"

#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // U+2581

}  // namespace

absl::StatusOr<SentencePieceNormalizer> SentencePieceNormalizer::Make(const SentencePieceModel& model) {
  SentencePieceNormalizer n;
  if (!model.precompiled_charsmap.empty()) {
    ASSIGN_OR_RETURN(PrecompiledCharsMap map, PrecompiledCharsMap::FromBlob(model.precompiled_charsmap));
    n.charsmap_ = std::move(map);
  }
  for (const auto& piece : model.pieces) {
    if (piece.type != SentencePieceModel::PieceType::kUserDefined) continue;
    n.user_defined_.insert(piece.text);
    n.user_first_byte_[static_cast<unsigned char>(piece.text[0])] = true;
    n.user_longest_ = std::max(n.user_longest_, piece.text.size());
  }
  n.add_dummy_prefix_ = model.add_dummy_prefix;
  n.remove_extra_whitespaces_ = model.remove_extra_whitespaces;
  n.escape_whitespaces_ = model.escape_whitespaces;
  n.suffix_ = model.treat_whitespace_as_suffix;
  return n;
}

absl::StatusOr<std::pair<std::string_view, size_t>> SentencePieceNormalizer::NormalizePrefix(
    std::string_view text) const {
  if (user_first_byte_[static_cast<unsigned char>(text[0])]) {
    for (size_t len = std::min(user_longest_, text.size()); len > 0; --len)
      if (user_defined_.contains(Sv(text.substr(0, len)))) return std::make_pair(text.substr(0, len), len);
  }
  if (charsmap_) {
    ASSIGN_OR_RETURN(const PrecompiledCharsMap::Match match, charsmap_->Find(text, /*longest=*/true));
    if (match.length > 0) return std::make_pair(match.replacement, match.length);
  }
  const size_t len = std::min(text.size(), Utf8Length(static_cast<unsigned char>(text[0])));
  return std::make_pair(text.substr(0, len), len);
}

void SentencePieceNormalizer::AppendEscaped(std::string_view part, std::string& out) const {
  for (const char c : part) {
    if (c == ' ' && escape_whitespaces_) out.append(kSpaceSymbol);
    else out.push_back(c);
  }
}

absl::StatusOr<std::string> SentencePieceNormalizer::Normalize(std::string_view input) const {
  std::string out;
  if (remove_extra_whitespaces_) {  // leading spaces
    while (!input.empty()) {
      ASSIGN_OR_RETURN(const auto prefix, NormalizePrefix(input));
      if (prefix.first != " ") break;
      input.remove_prefix(prefix.second);
    }
  }
  if (input.empty()) return out;
  out.reserve(input.size() + input.size() / 2);
  const std::string_view space = escape_whitespaces_ ? kSpaceSymbol : std::string_view(" ");
  if (!suffix_ && add_dummy_prefix_) out.append(space);
  bool prev_space = remove_extra_whitespaces_;
  while (!input.empty()) {
    ASSIGN_OR_RETURN(auto prefix, NormalizePrefix(input));
    std::string_view part = prefix.first;
    while (prev_space && !part.empty() && part[0] == ' ') part.remove_prefix(1);
    if (!part.empty()) {
      AppendEscaped(part, out);
      prev_space = part.back() == ' ';
    }
    input.remove_prefix(prefix.second);
    if (!remove_extra_whitespaces_) prev_space = false;
  }
  if (remove_extra_whitespaces_)
    while (out.size() >= space.size() && std::string_view(out).substr(out.size() - space.size()) == space)
      out.resize(out.size() - space.size());
  if (suffix_ && add_dummy_prefix_) out.append(space);
  return out;
}

}  // namespace attune::tok
