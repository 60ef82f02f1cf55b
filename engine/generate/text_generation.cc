// Generator::GenerateText: prompts as text, through the tokenizer, and the
// generated ids streamed back as text, cut at EOS ids and stop strings.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "attune/generator.h"
#include "attune/tokenizer.h"
#include "core/common/status_macros.h"

namespace attune {
namespace {

// One prompt's text as it is generated. Text that could still be the start of
// a stop string is held back until the next token decides.
class PromptText {
 public:
  PromptText(const Tokenizer& tokenizer, const std::vector<std::string>& stop) : stream_(tokenizer), stop_(stop) {
    for (const std::string& s : stop_) hold_ = std::max(hold_, s.empty() ? 0 : s.size() - 1);
  }
  bool stopped() const { return stopped_; }
  size_t kept_tokens() const { return kept_tokens_; }
  const std::string& text() const { return text_; }

  /// Adds one generated id; returns the text now safe to show.
  absl::StatusOr<std::string> Push(int64_t id) {
    ++kept_tokens_;
    ASSIGN_OR_RETURN(const std::string piece, stream_.Push(id));
    return Append(piece);
  }
  /// The end of generation: what was held back.
  std::string Finish() {
    std::string rest = stopped_ ? std::string() : Append(stream_.Finish());
    if (!stopped_) rest += text_.substr(shown_), shown_ = text_.size();
    return rest;
  }

 private:
  std::string Append(const std::string& piece) {
    if (stopped_ || piece.empty()) return "";
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
    size_t safe = stopped_ || text_.size() <= hold_ ? (stopped_ ? text_.size() : 0) : text_.size() - hold_;
    while (safe > shown_ && safe < text_.size() && (static_cast<unsigned char>(text_[safe]) & 0xC0) == 0x80) --safe;
    if (safe <= shown_) return "";
    std::string out = text_.substr(shown_, safe - shown_);
    shown_ = safe;
    return out;
  }

  TextStream stream_;
  const std::vector<std::string>& stop_;
  size_t hold_ = 0;
  std::string text_;
  size_t shown_ = 0;
  bool stopped_ = false;
  size_t kept_tokens_ = 0;
};

}  // namespace

absl::StatusOr<TextGenerationResult> Generator::GenerateText(const Tokenizer& tokenizer,
                                                             const std::vector<std::string>& prompts,
                                                             const GenerationOptions& options,
                                                             const std::vector<std::string>& stop,
                                                             const TextCallback& on_text) const {
  const int64_t model_vocab = decode_signature().vocab_size;
  if (model_vocab > 0 && tokenizer.vocab_size() > model_vocab)
    return absl::InvalidArgumentError(absl::StrCat("the tokenizer's vocabulary (", tokenizer.vocab_size(),
                                                   " ids) does not match the model's logits width (", model_vocab,
                                                   "): is it the model's own tokenizer?"));
  TextGenerationResult result;
  for (size_t p = 0; p < prompts.size(); ++p) {
    auto ids = tokenizer.Encode(prompts[p]);
    if (!ids.ok()) return Annotate(ids.status(), absl::StrCat("prompt ", p + 1));
    if (ids->empty()) return absl::InvalidArgumentError(absl::StrCat("prompt ", p + 1, " encodes to no tokens"));
    result.prompt_ids.push_back(*std::move(ids));
  }
  GenerationOptions run = options;
  if (run.eos_id < 0 && !tokenizer.eos_ids().empty()) {
    run.eos_id = tokenizer.eos_ids()[0];
    run.stop_ids.insert(run.stop_ids.end(), tokenizer.eos_ids().begin() + 1, tokenizer.eos_ids().end());
  }
  std::vector<PromptText> texts;
  for (size_t p = 0; p < prompts.size(); ++p) texts.emplace_back(tokenizer, stop);
  absl::Status failure;
  auto on_token = [&](const TokenEvent& event) {
    for (size_t r = 0; r < event.tokens.size(); ++r) {
      if (event.tokens[r] < 0 || texts[r].stopped()) continue;
      auto piece = texts[r].Push(event.tokens[r]);
      if (!piece.ok()) {
        failure = piece.status();
        return false;
      }
      if (on_text && !piece->empty()) on_text(r, *piece);
    }
    return stop.empty() || !std::all_of(texts.begin(), texts.end(), [](const PromptText& t) { return t.stopped(); });
  };
  ASSIGN_OR_RETURN(result.tokens, Generate(result.prompt_ids, run, on_token));
  RETURN_IF_ERROR(failure);
  for (size_t r = 0; r < texts.size(); ++r) {
    const std::string rest = texts[r].Finish();
    if (on_text && !rest.empty()) on_text(r, rest);
    result.text.push_back(texts[r].text());
    if (texts[r].stopped()) result.tokens.generated_ids[r].resize(texts[r].kept_tokens());
  }
  return result;
}

}  // namespace attune
