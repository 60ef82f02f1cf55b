// What the subgraph a fused attention replaces gives for NaN and infinite
// inputs, made true of the fused output after any kernel ran: the unfused
// P·V multiplies every key's V by its probability, and 0 · NaN = 0 · inf =
// NaN, so a non-finite V entry makes its output column NaN in every row;
// and a row is NaN (softmax of NaN, or of +inf - +inf) whose score is NaN
// or +inf for a key it sees, or for a hidden key whose score the mask adds
// to rather than replaces (AttentionArgs::hidden_nonfinite); non-finite Q
// or K entries and NaN or +inf bias entries cause such scores (a score of
// -inf only hides its key). Behind a Where(IsNaN(p), 0, p) guard such a row
// has all-zero weights instead. Scores that overflow the subgraph's score
// type from finite inputs are covered where that type is float16
// (AttentionArgs::score_limit: rows whose |q|·max|k| reaches it are read
// score by score); float32 overflow from finite inputs is not. The kernels skip
// hidden keys and clamp exponents, so without this they return finite
// numbers there.
#pragma once

#include "ops/attention/kernels/attention_args.h"

namespace attune::attention {

/// Writes NaN into a.y where the rules above say the subgraph gives NaN.
/// One read of Q, K, V and the bias; nothing is written when all are finite.
void PropagateNonFinite(const AttentionArgs& a);

}  // namespace attune::attention
