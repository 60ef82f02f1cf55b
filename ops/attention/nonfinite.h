// What the subgraph a fused attention replaces gives for NaN and infinite
// inputs, made true of the fused output after any kernel ran: the unfused
// P·V multiplies every key's V by its probability, and 0 · NaN = 0 · inf =
// NaN, so a non-finite V entry makes its output column NaN in every row;
// and a row whose score for a key it sees is NaN or +inf is NaN (softmax of
// NaN, or of +inf - +inf), which non-finite Q or K entries and NaN or +inf
// bias entries cause (a score of -inf only hides its key). Scores that
// overflow float32 from finite inputs are not covered. The kernels skip
// hidden keys and clamp exponents, so without this they return finite
// numbers there.
#pragma once

#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

/// Writes NaN into a.y where the rules above say the subgraph gives NaN.
/// One read of Q, K, V and the bias; nothing is written when all are finite.
void PropagateNonFinite(const AttentionArgs& a);

}  // namespace attune::attention
