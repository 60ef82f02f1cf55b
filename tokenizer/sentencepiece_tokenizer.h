// SentencePiece tokenizer.model files, through libsentencepiece.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "attune/tokenizer.h"

namespace attune::tok {

/// BOS (when the model defines one) is put first when special tokens are added.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePiece(const std::string& path);

}  // namespace attune::tok
