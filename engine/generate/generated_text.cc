// GeneratedText: streamed text of generated ids, cut at stop strings.
#include "attune/generated_text.h"

#include <algorithm>

#include "core/common/status_macros.h"

namespace attune {

GeneratedText::GeneratedText(const Tokenizer& tokenizer, std::vector<std::string> stop)
    : stream_(tokenizer), stop_(std::move(stop)) {
  for (const std::string& s : stop_) hold_ = std::max(hold_, s.empty() ? 0 : s.size() - 1);
}

absl::StatusOr<std::string> GeneratedText::Push(int64_t id) {
  if (stopped_) return std::string();
  ++kept_tokens_;
  ASSIGN_OR_RETURN(const std::string piece, stream_.Push(id));
  return Append(piece);
}

std::string GeneratedText::Finish() {
  std::string rest = stopped_ ? std::string() : Append(stream_.Finish());
  if (!stopped_) rest += text_.substr(shown_), shown_ = text_.size();
  return rest;
}

std::string GeneratedText::Append(const std::string& piece) {
  if (stopped_ || piece.empty()) return "";
  // A stop string may begin in the held-back tail of the text before.
  const size_t search_from = text_.size() > hold_ ? text_.size() - hold_ : 0;
  text_ += piece;
  size_t cut = std::string::npos;
  for (const std::string& s : stop_)
    if (!s.empty()) cut = std::min(cut, text_.find(s, search_from));
  if (cut != std::string::npos) {
    text_.resize(cut);
    stopped_ = true;
  }
  // Show all but the last hold_ bytes (moved back to a character boundary).
  size_t safe = stopped_ ? text_.size() : (text_.size() <= hold_ ? 0 : text_.size() - hold_);
  while (safe > shown_ && safe < text_.size() && (static_cast<unsigned char>(text_[safe]) & 0xC0) == 0x80) --safe;
  if (safe <= shown_) return "";
  std::string out = text_.substr(shown_, safe - shown_);
  shown_ = safe;
  return out;
}

}  // namespace attune
