// SentencePiece's tokenizer.model: a protobuf ModelProto (sentencepiece_model.proto),
// read with a small bounds-checked wire-format reader. Only the fields that
// decide encoding and decoding are kept; unknown fields are skipped, as
// protobuf readers do.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace attune::tok {

struct SentencePieceModel {
  enum class PieceType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };
  enum class ModelType { kUnigram = 1, kBpe = 2, kWord = 3, kChar = 4 };
  struct Piece {
    std::string text;
    float score = 0;
    PieceType type = PieceType::kNormal;
  };
  std::vector<Piece> pieces;
  // trainer_spec (field 2), with the proto's defaults.
  ModelType model_type = ModelType::kUnigram;
  bool byte_fallback = false;
  bool treat_whitespace_as_suffix = false;
  bool split_by_whitespace = true;
  int32_t unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
  std::string unk_surface = " \xE2\x81\x87 ";
  // normalizer_spec (field 3).
  std::string normalizer_name;
  std::string precompiled_charsmap;
  bool add_dummy_prefix = true, remove_extra_whitespaces = true, escape_whitespaces = true;
};

/// InvalidArgument naming the field for a truncated or malformed file, a
/// model with no pieces, or ids outside the pieces.
absl::StatusOr<SentencePieceModel> ParseSentencePieceModel(std::string_view bytes);

}  // namespace attune::tok
