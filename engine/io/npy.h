// NumPy .npy files (format versions 1.0–3.0, little-endian, C order) to and from Tensors.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

/// Parses .npy bytes; InvalidArgument for anything malformed, Unimplemented for
/// dtypes Attune does not hold (e.g. complex, strings, Fortran order).
absl::StatusOr<Tensor> ParseNpy(std::string_view bytes, int64_t max_bytes = kDefaultMaxTensorBytes);
/// Serialises a tensor as .npy version 1.0.
absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor);

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path, int64_t max_bytes = kDefaultMaxTensorBytes);
absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor);

/// Reads a whole file; NotFound / InvalidArgument with the path on failure.
absl::StatusOr<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes = int64_t{4} << 30);

}  // namespace attune
