// Options of the constant folding pass (the factory without options is in passes.h).
#pragma once

#include <cstdint>
#include <memory>

#include "engine/passes/pass.h"

namespace attune {

/// A folded constant lives in the model and in memory for the session's
/// life; above this size a computation stays a node.
inline constexpr int64_t kDefaultMaxFoldedBytes = int64_t{1} << 20;

struct ConstantFoldingOptions {
  /// A fold may add at most this many bytes of constant data beyond what it
  /// frees (constant inputs only the folded node used). Ops that only
  /// reinterpret a buffer (Reshape, Squeeze, Unsqueeze, Flatten, Identity) and
  /// Shape/Size are exempt.
  int64_t max_added_bytes = kDefaultMaxFoldedBytes;
};

std::unique_ptr<Pass> MakeConstantFoldingPass(const ConstantFoldingOptions& options);

}  // namespace attune
