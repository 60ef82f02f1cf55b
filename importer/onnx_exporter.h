// Writes the graph IR back to an ONNX ModelProto (constants as raw_data initializers).
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/graph.h"

namespace attune {

/// The serialized ModelProto of `graph`; ResourceExhausted above protobuf's 2 GB.
absl::StatusOr<std::string> ExportModelToBytes(const Graph& graph);

/// ExportModelToBytes written to `path`.
absl::Status ExportModelToFile(const Graph& graph, const std::string& path);

}  // namespace attune
