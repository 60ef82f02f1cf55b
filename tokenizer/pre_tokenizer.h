// Pre-tokenizers of tokenizer.json ("pre_tokenizer"): they cut normalized
// text into the pieces the model sees one at a time.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json_fwd.hpp"
#include "tokenizer/pattern.h"

namespace attune::tok {

struct Piece {
  std::string text;
  bool at_start = false;  // starts at the beginning of the input (Metaspace's prepend_scheme "first")
};

class PreTokenizer {
 public:
  virtual ~PreTokenizer() = default;
  /// Replaces `pieces` by their parts, in order.
  virtual absl::Status PreTokenize(std::vector<Piece>& pieces) const = 0;
};

/// How a split treats the matched delimiters (SplitDelimiterBehavior).
enum class SplitBehavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

/// Cuts `piece` at `matches` (non-empty, ordered), appending the parts to `out`.
void SplitAtMatches(const Piece& piece, const MatchRanges& matches, bool invert, SplitBehavior behavior,
                    std::vector<Piece>& out);

absl::StatusOr<std::unique_ptr<PreTokenizer>> MakePreTokenizer(const nlohmann::json& j);

}  // namespace attune::tok
