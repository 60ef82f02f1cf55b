// Added tokens (tokenizer.json "added_tokens"): matched in the text before the
// model sees it and never split. Tokens marked "normalized" are matched in
// the normalized text, the others in the text as given.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace attune::tok {

class Normalizer;

struct AddedToken {
  std::string content;
  int32_t id = -1;
  bool single_word = false, lstrip = false, rstrip = false, normalized = true, special = false;
};

/// A part of the input: an added token, or text for the model.
struct TextPart {
  std::string text;
  int32_t id = -1;        // the added token's id, or -1 for text
  bool at_start = false;  // starts at the beginning of the input
};

class AddedVocabulary {
 public:
  /// `normalizer` (may be null) gives the normalized form of "normalized" tokens.
  absl::Status Load(const nlohmann::json& added_tokens, const Normalizer* normalizer);

  /// Cuts `parts` at the tokens of one kind (`normalized` or not); parts that
  /// are already tokens stay as they are.
  void Split(std::vector<TextPart>& parts, bool normalized) const;

  std::optional<int32_t> TokenToId(std::string_view content) const;
  const AddedToken* ById(int32_t id) const;
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  bool empty() const { return tokens_.empty(); }

 private:
  // A byte trie per kind; nodes hold the index of the token ending there.
  struct Trie {
    absl::flat_hash_map<uint64_t, int32_t> edges;  // (node << 8 | byte) -> node
    std::vector<int32_t> token{-1};                 // by node
    bool empty() const { return token.size() == 1; }
    void Add(std::string_view key, int32_t index);
    // The longest key starting at text[pos]: its end and token index, or {0, -1}.
    std::pair<size_t, int32_t> Longest(std::string_view text, size_t pos) const;
  };
  void SplitOne(const TextPart& part, const Trie& trie, std::vector<TextPart>& out) const;

  std::vector<AddedToken> tokens_;
  absl::flat_hash_map<std::string, int32_t> by_content_;
  absl::flat_hash_map<int32_t, int32_t> by_id_;  // id -> index in tokens_
  Trie raw_, normalized_;
};

}  // namespace attune::tok
