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
};

}  // namespace attune
