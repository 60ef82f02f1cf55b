// Internal to importer/: an ONNX GraphProto into a Graph whose opsets are already set.
#pragma once

#include "absl/status/status.h"
#include "core/ir/graph.h"
#include "importer/proto_tensor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// Fills `graph` with the initializers, inputs, outputs, value_info and nodes of
/// `proto`, then verifies it (dangling inputs, duplicate producers, cycles).
/// Initializer payloads are released from `proto` as they are copied.
absl::Status ReadGraph(onnx::GraphProto* proto, const TensorSource& source, Graph* graph);

}  // namespace attune::importer
