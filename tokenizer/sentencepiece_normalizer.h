// SentencePiece's own normalization (normalizer.cc): user-defined pieces kept
// as they are, the longest rule of the precompiled charsmap at each position,
// extra whitespace removed, a dummy "▁" prefix, and spaces made "▁".
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "tokenizer/precompiled_charsmap.h"
#include "tokenizer/sentencepiece_model.h"

namespace attune::tok {

class SentencePieceNormalizer {
 public:
  /// From the model's normalizer_spec and its USER_DEFINED pieces.
  static absl::StatusOr<SentencePieceNormalizer> Make(const SentencePieceModel& model);
  /// `text` is valid UTF-8.
  absl::StatusOr<std::string> Normalize(std::string_view text) const;

 private:
  // The normalized form of the text's first character(s) and how many bytes it takes.
  absl::StatusOr<std::pair<std::string_view, size_t>> NormalizePrefix(std::string_view text) const;
  void AppendEscaped(std::string_view part, std::string& out) const;

  std::optional<PrecompiledCharsMap> charsmap_;
  absl::flat_hash_set<std::string> user_defined_;
  bool user_first_byte_[256] = {};
  size_t user_longest_ = 0;
  bool add_dummy_prefix_ = true, remove_extra_whitespaces_ = true, escape_whitespaces_ = true, suffix_ = false;
};

}  // namespace attune::tok
