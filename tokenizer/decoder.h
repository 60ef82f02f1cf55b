// Decoders of tokenizer.json ("decoder"): token strings back to text. They
// work on bytes: a character split across byte tokens is only whole once
// they are joined, and a streamed decode must be able to see that.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace attune::tok {

class Decoder {
 public:
  virtual ~Decoder() = default;
  /// Rewrites the token strings (the pieces that are joined into the text).
  virtual absl::Status Decode(std::vector<std::string>& tokens) const = 0;
};

absl::StatusOr<std::unique_ptr<Decoder>> MakeDecoder(const nlohmann::json& j);

}  // namespace attune::tok
