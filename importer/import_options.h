// Limits applied while reading an ONNX model or tensor: nothing in a file is trusted.
#pragma once

#include <climits>
#include <cstdint>

#include "attune/tensor.h"

namespace attune {

/// Protobuf cannot parse a message above 2 GB; bigger models keep weights as external data.
inline constexpr int64_t kMaxProtobufBytes = INT_MAX;

struct ImportOptions {
  /// Largest single tensor (initializer, Constant value, external-data tensor) in bytes.
  int64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  /// Largest serialized model (or .pb tensor) accepted; capped at kMaxProtobufBytes.
  int64_t max_model_bytes = kMaxProtobufBytes;
  /// The session compresses the weights of products at load: float weights
  /// that only products read stay in the mapped file
  /// (importer/file_weights.h) rather than be copied.
  bool weights_compressed_at_load = false;
};

}  // namespace attune
