// Einsum equations: parsed once at prepare time, then bound to the operand
// shapes of each call (ellipsis widths and label sizes depend on them).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace attune {

/// One term of the equation as written: its letters and where "..." stood.
struct EinsumTerm {
  std::string letters;    // [a-zA-Z] only
  int ellipsis_at = -1;   // index into letters where "..." appears, -1 if absent
};

/// A parsed equation, independent of shapes.
struct EinsumEquation {
  std::vector<EinsumTerm> inputs;
  bool explicit_output = false;
  EinsumTerm output;  // meaningful when explicit_output
};

/// Parses "ij,jk->ik", "...ij,...jk", "ii" and so on (spaces ignored).
absl::StatusOr<EinsumEquation> ParseEinsumEquation(std::string_view equation);

/// Labels are small integers: 0..51 for letters, 52 + i for the i-th
/// (right-aligned, broadcast) dimension that ellipses stand for.
inline constexpr int kEinsumEllipsisLabel = 52;

/// An equation bound to operand shapes.
struct EinsumBinding {
  std::vector<std::vector<int>> input_labels;  // per operand, one label per dim
  std::vector<int> output_labels;              // one label per output dim
  std::vector<int64_t> label_size;             // indexed by label; sizes after broadcasting
  std::vector<int64_t> output_shape;
  int num_labels() const { return static_cast<int>(label_size.size()); }
};

/// Expands ellipses, checks every label's sizes agree (equal, or 1 to
/// broadcast) and derives the output. `op` prefixes error messages.
absl::StatusOr<EinsumBinding> BindEinsum(std::string_view op, const EinsumEquation& equation,
                                         const std::vector<std::vector<int64_t>>& shapes);

}  // namespace attune
