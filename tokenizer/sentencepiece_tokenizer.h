// SentencePiece tokenizer.model files, read natively (sentencepiece_model.h) and
// encoded and decoded as SentencePiece does.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tokenizer.h"

namespace attune::tok {

/// The bytes of a tokenizer.model. BOS (when the model defines one) is put
/// first when special tokens are added; the EOS ids are the model's eos_id.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadSentencePiece(std::string_view bytes);

}  // namespace attune::tok
