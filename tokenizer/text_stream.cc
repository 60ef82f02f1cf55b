// attune::TextStream: the text of the ids so far, written as whole characters.
//
// Each push decodes a short window of ids (a few already written, for the
// decoders that look at neighbours, such as the leading-space strip) and
// returns what the window's text gained, up to the last whole character.
#include "attune/tokenizer.h"
#include "core/common/status_macros.h"
#include "tokenizer/utf8.h"

namespace attune {
namespace {

// Ids of context kept once the window's text is all written.
constexpr size_t kContextIds = 4;
constexpr char kReplacement[] = "\xEF\xBF\xBD";

}  // namespace

TextStream::TextStream(const Tokenizer& tokenizer, bool skip_special_tokens)
    : tokenizer_(tokenizer), skip_special_(skip_special_tokens) {}

absl::StatusOr<std::string> TextStream::Push(int64_t id) {
  window_.push_back(id);
  ASSIGN_OR_RETURN(std::string text, tokenizer_.DecodeBytes(window_, skip_special_));
  size_t complete = tok::CompleteUtf8Prefix(text);
  // A decoder that replaces a cut character itself (SentencePiece) ends with U+FFFD: wait for the rest.
  if (complete >= 3 && text.compare(complete - 3, 3, kReplacement) == 0) complete -= 3;
  if (complete <= written_) return std::string();
  std::string out = tok::LossyUtf8(std::string_view(text).substr(written_, complete - written_));
  written_ = complete;
  if (complete == text.size() && window_.size() > kContextIds) {
    window_.erase(window_.begin(), window_.end() - kContextIds);
    ASSIGN_OR_RETURN(const std::string context, tokenizer_.DecodeBytes(window_, skip_special_));
    written_ = context.size();
  }
  return out;
}

std::string TextStream::Finish() {
  std::string rest;
  if (auto text = tokenizer_.DecodeBytes(window_, skip_special_); text.ok() && text->size() > written_)
    rest = tok::LossyUtf8(std::string_view(*text).substr(written_));
  window_.clear();
  written_ = 0;
  return rest;
}

}  // namespace attune
