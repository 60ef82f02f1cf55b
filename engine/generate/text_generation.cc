// Generator::GenerateText: prompts as text, through the tokenizer, and the
// generated ids streamed back as text, cut at EOS ids and stop strings.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "attune/generated_text.h"
#include "attune/generator.h"
#include "attune/tokenizer.h"
#include "core/common/status_macros.h"

namespace attune {
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
  std::vector<GeneratedText> texts;
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
    return stop.empty() || !std::all_of(texts.begin(), texts.end(), [](const GeneratedText& t) { return t.stopped(); });
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
