// The tokenizer.json pipeline: added tokens, normalizer, pre-tokenizer, model,
// post-processor; and back through the decoder.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tokenizer.h"

namespace attune::tok {

absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizerJson(std::string_view json_text);

}  // namespace attune::tok
