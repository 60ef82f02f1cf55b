// Models of tokenizer.json ("model"): one pre-tokenized piece to token ids.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace attune::tok {

class Model {
 public:
  virtual ~Model() = default;
  /// Appends the ids of one piece (valid UTF-8, non-empty).
  virtual absl::Status Tokenize(std::string_view piece, std::vector<int32_t>& ids) const = 0;

  std::optional<int32_t> TokenToId(std::string_view token) const;
  /// The token's string, or null for an id the vocabulary lacks.
  const std::string* IdToToken(int32_t id) const;
  /// One more than the largest id.
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }

 protected:
  /// Records token `id`; InvalidArgument for a negative or repeated id.
  absl::Status AddToken(std::string token, int64_t id);
  /// The id of `<0xNN>` for each byte value, -1 where absent (byte fallback).
  void IndexByteTokens();

  absl::flat_hash_map<std::string, int32_t> vocab_;
  std::vector<std::string> tokens_;   // by id
  std::vector<bool> present_;         // by id: a gap in the ids is not a token
  int32_t byte_ids_[256];
};

absl::StatusOr<std::unique_ptr<Model>> MakeBpeModel(const nlohmann::json& j);
/// `sentencepiece` (by id; null for tokenizer.json): the entries a SentencePiece
/// model's segmentation may use; its scores are then summed in float as there.
absl::StatusOr<std::unique_ptr<Model>> MakeUnigramModel(const nlohmann::json& j,
                                                        const std::vector<bool>* sentencepiece = nullptr);
absl::StatusOr<std::unique_ptr<Model>> MakeWordPieceModel(const nlohmann::json& j);

/// By "type" (or, when absent, by the fields a model has).
absl::StatusOr<std::unique_ptr<Model>> MakeModel(const nlohmann::json& j);

}  // namespace attune::tok
