// attune::Tokenizer: text to token ids and back with a model's own tokenizer.
//
// Reads a Hugging Face tokenizer.json (BPE, byte-level or with byte fallback;
// Unigram; WordPiece; with its normalizer, pre-tokenizer, added tokens,
// post-processor and decoder) or a SentencePiece tokenizer.model. The ids
// are those the reference tokenizers give for the same file and text.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/export.h"

namespace attune {

class ATTUNE_API Tokenizer {
 public:
  /// A tokenizer.json, a tokenizer.model, or a folder holding one of them
  /// (tokenizer.json preferred). The end-of-sequence ids come from a
  /// tokenizer_config.json / generation_config.json beside the file when
  /// present, else from the special tokens' names (</s>, <|endoftext|>, ...).
  /// InvalidArgument for a malformed file, Unimplemented naming an
  /// unsupported model, normalizer, pre-tokenizer, post-processor or decoder.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> Load(const std::string& path);
  /// From the text of a tokenizer.json.
  static absl::StatusOr<std::unique_ptr<Tokenizer>> FromJson(std::string_view json_text);
  /// The tokenizer file beside a model (tokenizer.json, then tokenizer.model,
  /// in the model's folder), or NotFound.
  static absl::StatusOr<std::string> FindBeside(const std::string& model_path);

  virtual ~Tokenizer();

  /// The ids of `text` (UTF-8; InvalidArgument naming the byte where it is
  /// not). `add_special_tokens` applies the post-processor (BOS/EOS).
  virtual absl::StatusOr<std::vector<int64_t>> Encode(std::string_view text, bool add_special_tokens = true) const = 0;
  /// The text of `ids`: InvalidArgument for an id outside the vocabulary.
  /// Bytes that do not form UTF-8 (a character cut off) become U+FFFD.
  absl::StatusOr<std::string> Decode(const std::vector<int64_t>& ids, bool skip_special_tokens = false) const;
  /// As Decode, but the bytes as they are, possibly ending inside a character.
  virtual absl::StatusOr<std::string> DecodeBytes(const std::vector<int64_t>& ids,
                                                  bool skip_special_tokens = false) const = 0;

  /// One more than the largest id (model vocabulary and added tokens).
  virtual int64_t vocab_size() const = 0;
  virtual std::optional<int64_t> TokenToId(std::string_view token) const = 0;
  /// Whether `id` is a special token (skipped by Decode with skip_special_tokens).
  virtual bool IsSpecial(int64_t id) const = 0;
  /// The ids that end a generated sequence (may be empty).
  const std::vector<int64_t>& eos_ids() const { return eos_ids_; }
  void set_eos_ids(std::vector<int64_t> ids) { eos_ids_ = std::move(ids); }

 protected:
  std::vector<int64_t> eos_ids_;
};

/// Streamed decoding: ids in one at a time, text out as soon as it is whole
/// characters. A multi-byte UTF-8 character is never split between pieces,
/// and the concatenated pieces equal Decode of all the ids.
class ATTUNE_API TextStream {
 public:
  explicit TextStream(const Tokenizer& tokenizer, bool skip_special_tokens = true);
  /// The text that `id` completes ("" while a character is still partial).
  absl::StatusOr<std::string> Push(int64_t id);
  /// What is left (a cut-off character as U+FFFD), and a fresh start.
  std::string Finish();

 private:
  const Tokenizer& tokenizer_;
  bool skip_special_;
  std::vector<int64_t> window_;  // ids whose text is partly written, after a few ids of context
  size_t written_ = 0;           // bytes of the window's text already returned
};

}  // namespace attune
