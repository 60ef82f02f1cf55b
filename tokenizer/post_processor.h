// Post-processors of tokenizer.json ("post_processor"): the special tokens put
// around an encoded sequence (BOS/EOS templates, BERT's [CLS] ... [SEP]).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"

namespace attune::tok {

class PostProcessor {
 public:
  virtual ~PostProcessor() = default;
  /// The ids of one sequence with the special tokens added.
  virtual void Process(std::vector<int32_t>& ids) const = 0;
};

/// Unimplemented naming an unknown "type". ByteLevel adds no ids.
absl::StatusOr<std::unique_ptr<PostProcessor>> MakePostProcessor(const nlohmann::json& j);

}  // namespace attune::tok
