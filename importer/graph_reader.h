// Internal to importer/: an ONNX GraphProto into a Graph whose opsets are already set.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "core/ir/graph.h"
#include "importer/proto_tensor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// The initializers' raw_data that StripInitializerRawData left out of a parsed
/// graph: by initializer index, in the mapped model file.
struct LeftOutRawData {
  std::shared_ptr<MappedFile> file;
  std::vector<std::optional<RawDataSpan>> spans;
};

/// Fills `graph` with the initializers, inputs, outputs, value_info and nodes of
/// `proto`, then verifies it (dangling inputs, duplicate producers, cycles).
/// Initializer payloads are released from `proto` as they are copied. With
/// `left_out`, whose spans must number the initializers, an initializer with a
/// span reads its raw_data from the mapped file.
absl::Status ReadGraph(onnx::GraphProto* proto, const TensorSource& source, Graph* graph,
                       const LeftOutRawData* left_out = nullptr);

}  // namespace attune::importer
