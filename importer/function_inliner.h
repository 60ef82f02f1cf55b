// Internal to importer/: model-local ONNX functions expanded into the main graph.
#pragma once

#include "absl/status/status.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// Replaces every node that calls one of the model's functions with the function
/// body (recursively): formal inputs/outputs mapped to the call's values, inner
/// values and nodes given a unique prefix, attribute references resolved from the
/// call (or the function's defaults, or dropped). The functions' opset imports are
/// merged into the model's; a different version of an imported domain is
/// Unimplemented. Functions nobody calls are ignored.
absl::Status InlineModelFunctions(onnx::ModelProto* model);

}  // namespace attune::importer
