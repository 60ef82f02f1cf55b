// Serialized ONNX TensorProto <-> Tensor, for `.pb` input/output files.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "importer/import_options.h"

namespace attune {

/// Parses a serialized TensorProto (raw_data or typed fields; external data is refused).
absl::StatusOr<Tensor> TensorFromProtoBytes(std::string_view bytes, const ImportOptions& options = {});

/// A serialized TensorProto named `name` holding `tensor` as raw_data.
absl::StatusOr<std::string> TensorToProtoBytes(const Tensor& tensor, const std::string& name);

}  // namespace attune
