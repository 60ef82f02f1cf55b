// Token ids back to text from a Hugging Face tokenizer.json or a GPT-2 style
// vocab.json. Decoding only: turning text into ids needs the merges and the
// pre-tokenizer, which generation from ids does not.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"

namespace attune {

class Detokenizer {
 public:
  /// How a token's string maps to bytes.
  enum class Mode {
    kByteLevel,  // GPT-2: every byte is one printable code point (bytes_to_unicode)
    kMetaspace,  // SentencePiece (LLaMA): U+2581 is a space, <0xNN> a raw byte
    kPlain,      // the token string is the text
  };

  /// Reads tokenizer.json (model.vocab as a map or a Unigram list, added_tokens,
  /// the decoder type) or vocab.json ({token: id}, byte-level).
  static absl::StatusOr<Detokenizer> Load(const std::string& path);
  /// From a {token: id} map, for tests.
  static Detokenizer FromVocab(const std::unordered_map<std::string, int64_t>& vocab, Mode mode);

  Mode mode() const { return mode_; }
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  /// The bytes of one token ("<ID?>" for an id the vocabulary lacks). A UTF-8
  /// character may span tokens: streaming writes these bytes as they come.
  std::string TokenBytes(int64_t id) const;
  /// The text of a sequence of ids.
  std::string Decode(std::span<const int64_t> ids) const;

 private:
  Mode mode_ = Mode::kPlain;
  std::vector<std::string> tokens_;  // by id; "" for a gap
  std::vector<bool> special_;        // added tokens: written as they are, in any mode
};

}  // namespace attune
