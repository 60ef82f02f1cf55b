// SentencePiece's precompiled_charsmap: the normalization rules a model was
// trained with (nmt_nfkc, nmt_nfkc_cf, ...) compiled into a darts-clone
// double-array trie over UTF-8 keys, whose values are offsets into a block of
// NUL-terminated replacement strings. The blob is
//   uint32 little-endian trie size in bytes | trie units (uint32 LE) | replacements
// It comes from a file: every read of it is bounds-checked, and a blob that
// points outside itself gives an error, never a read outside it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace attune::tok {

class PrecompiledCharsMap {
 public:
  /// InvalidArgument when the header, the trie size or the replacements are malformed.
  static absl::StatusOr<PrecompiledCharsMap> FromBlob(std::string_view blob);

  struct Match {
    size_t length = 0;             // bytes of the key matched (0: no rule matched)
    std::string_view replacement;  // valid UTF-8, up to its NUL
  };
  /// The shortest (`longest` false) or longest rule whose key is a prefix of
  /// `text`; a NUL byte ends the key. InvalidArgument when the trie points
  /// outside the blob or a replacement starts inside a character.
  absl::StatusOr<Match> Find(std::string_view text, bool longest) const;

 private:
  absl::StatusOr<std::string_view> Replacement(uint32_t offset) const;

  std::vector<uint32_t> units_;
  std::string replacements_;
};

}  // namespace attune::tok
