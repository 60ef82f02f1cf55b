// Normalizers of tokenizer.json ("normalizer"): text to text, before the
// pre-tokenizer. Offsets are not tracked: only ids and text are produced.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace attune::tok {

class Normalizer {
 public:
  virtual ~Normalizer() = default;
  /// `text` is valid UTF-8 and stays so.
  virtual absl::Status Normalize(std::string& text) const = 0;
};

/// Builds one from its JSON object; Unimplemented naming an unknown "type".
absl::StatusOr<std::unique_ptr<Normalizer>> MakeNormalizer(const nlohmann::json& j);

}  // namespace attune::tok
