// attune::GeneratedText: one sequence's generated ids turned into text as
// they come, cut at stop strings. Generator::GenerateText uses it for each
// prompt; a server uses it for each request it streams.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/export.h"
#include "attune/tokenizer.h"

namespace attune {

/// Text out as whole UTF-8 characters (special tokens skipped), ending
/// before the first of `stop` that the text reaches. Text that could still be
/// the start of a stop string is held back until the next id decides. The
/// tokenizer must outlive the object.
class ATTUNE_API GeneratedText {
 public:
  GeneratedText(const Tokenizer& tokenizer, std::vector<std::string> stop);

  /// Adds one generated id; returns the text now safe to show ("" while a
  /// character is partial or could begin a stop string, and after a stop).
  absl::StatusOr<std::string> Push(int64_t id);
  /// The end of generation: what was held back (a cut-off character as U+FFFD).
  std::string Finish();

  /// Whether a stop string was reached: generation should end.
  bool stopped() const { return stopped_; }
  /// Ids pushed up to and including the one that completed the stop string.
  size_t kept_tokens() const { return kept_tokens_; }
  /// All the text so far (cut before the stop string).
  const std::string& text() const { return text_; }

 private:
  std::string Append(const std::string& piece);

  TextStream stream_;
  std::vector<std::string> stop_;
  size_t hold_ = 0;  // bytes held back: one less than the longest stop string
  std::string text_;
  size_t shown_ = 0;
  bool stopped_ = false;
  size_t kept_tokens_ = 0;
};

}  // namespace attune
