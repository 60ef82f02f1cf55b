// Internal to importer/: torch's repeat_interleave over a dynamic dim, which
// torch.onnx (opsets 13-17 before torch 2.1) writes as a Loop over sequences,
// read back as the three tensor ops it computes.
#pragma once

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// Rewrites each `ConcatFromSequence(Loop(...), axis=d)` that is torch's
/// emission of `x.repeat_interleave(r, dim=d)` with a constant r:
///
///   S_x = SplitToSequence(x, ones, axis=d), S_r = SplitToSequence(Expand(r, n), ones, axis=0)
///   Loop(n = size(x, d), true, SequenceEmpty()) { i ->
///     SequenceInsert(seq, Reshape(Expand(Unsqueeze(S_x[i], d + 1), C1 ++ S_r[i] ++ C2), C3)) }
///
/// into `Reshape(Expand(Unsqueeze(x, d + 1), C1 ++ [r] ++ C2), C3)` on the
/// whole tensor: the slices share every dim but d, so each op meets the same
/// shapes and checks as in the loop, and the Concat along d of the n reshaped
/// slices is the whole reshape (C3 holds -1 at d and a number after it). Every
/// node of the emission is checked; anything else is left for the importer
/// to refuse. Returns the number of loops rewritten.
absl::StatusOr<int> RewriteTorchRepeatInterleave(onnx::GraphProto* graph, int64_t opset);

}  // namespace attune::importer
