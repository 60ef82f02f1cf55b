// Where a position bias (ALiBi, T5's relative bias) can sit in the mask steps
// between the scaled scores and the softmax: the tensors those steps add to
// the scores that do not depend on the scores. Which of them is the bias is
// not guessed here: the caller proves the steps with each candidate held at
// zero (mask_chain_proof.h) and keeps the first whose rest is a mask.
#pragma once

#include <vector>

#include "core/ir/graph.h"

namespace attune::attention {

/// The candidates, the most specific first:
///  - for an added tensor that is itself Add(b, m) (T5 adds its extended
///    mask into position_bias once, then every layer adds that to its
///    scores), b and m;
///  - every tensor an Add on the path adds to the scores (MPT: scores +
///    attn_bias, then the masked_fills).
/// The path runs from `masked` (what the softmax reads) back to `scores_in`
/// through nodes with exactly one input that depends on `scores_in`; a
/// candidate never depends on `scores` (the Q·Kᵀ MatMul's output).
std::vector<const Value*> PositionBiasCandidates(const Value* scores_in, const Value* masked, const Value* scores);

/// How `bias` enters the scores, when it is one of the two forms above, the
/// Add on the path reads the scores themselves (the first step), so that what
/// a hidden key's score is can be said exactly, and every step on the path is
/// a Where, Add, Sub, Identity or Dropout (each keeps a visible key's score +
/// bias exactly, whatever the bias; a Max floor would not).
enum class BiasEntry {
  kNone,        // neither form: not a position bias
  kScores,      // (scores + bias), then the mask steps (MPT)
  kIntoMask,    // scores + (bias + mask), then any further steps (T5)
};
BiasEntry BiasEntryOf(const Value* scores_in, const Value* masked, const Value* bias);

}  // namespace attune::attention
