// Minimal NumPy .npy reading and writing (little-endian, C order) on attune::Tensor.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace server {

/// Reads a .npy file into a new tensor (the data is read straight into the tensor's memory).
absl::StatusOr<attune::Tensor> ReadNpy(const std::string& path);
/// Writes a tensor as a version 1.0 .npy file.
absl::Status WriteNpy(const std::string& path, const attune::Tensor& tensor);

}  // namespace server
