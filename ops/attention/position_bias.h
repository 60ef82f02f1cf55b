// MultiHeadAttention's position bias (position_bias = 1): the float tensor a
// fused ALiBi or T5 attention adds to its scores, checked against the range
// the fusion was proven for and, with key padding, folded with the padding
// into the one bias view the kernels read.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ops/attention/attention_bias.h"
#include "ops/attention/attention_params.h"
#include "ops/attention/attention_shapes.h"
#include "ops/attention/key_padding.h"
#include "ops/kernel.h"

namespace attune::attention {

/// The largest magnitude of a finite position bias entry the fused op
/// computes exactly: below it, bias + score can neither reach a hiding fill
/// (finfo.min, -inf) nor stop finfo.min + bias from rounding back to
/// finfo.min, so a key the masks hide has weight 0 wherever a key shows, and
/// a row with no visible key gets the subgraph's fills. NaN and infinite
/// entries are computed as the subgraph computes them (the non-finite rules).
inline constexpr float kPositionBiasLimit = 0x1p100f;

/// Whether `bias` holds a finite entry of kPositionBiasLimit or more in
/// magnitude (each distinct row of a broadcast bias read once).
bool HasLargePositionBias(const AttentionShapes& s, const StridedView& bias);

/// InvalidArgument naming the first finite entry of `bias` whose magnitude is
/// kPositionBiasLimit or more, for an op whose fills are not known (no
/// masked_rows "fills" or "nan") or with a softcap: it cannot compute them exactly.
absl::Status CheckPositionBiasRange(const AttentionParams& params, const AttentionShapes& s, const StridedView& bias);

/// Computes again, as the subgraph does, every row whose position bias
/// (a.scores_bias) holds a finite entry of kPositionBiasLimit or more: each
/// key's score is scale·q·k + bias in float32 where no mask hides it, and where
/// one does, the fill of the part that hides it (a.hidden_fills; -inf with
/// MaskedRows::kNaN), added to that score when every part hiding it adds
/// (a.hidden_nonfinite); then the softmax over every key and P·V in double.
void RecomputeLargePositionBiasRows(const AttentionArgs& a);

/// The bias with the key padding folded in, materialised at [batch][bias
/// heads][bias rows][keys]: a padded key's entry is -inf where the
/// subgraph's padding replaces the score (Where), and bias + -inf where it
/// adds to it (so a NaN or +inf bias there stays NaN, as in the subgraph).
absl::StatusOr<AttentionBias> FoldKeyPadding(const KernelContext& ctx, const AttentionParams& params,
                                             const AttentionShapes& s, const StridedView& bias,
                                             const KeyPadding& padding);

}  // namespace attune::attention
