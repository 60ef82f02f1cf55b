// Reads ONNX protobuf files (backend test data) into Attune types, for tests.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "onnx/onnx_pb.h"

namespace attune::testing {

/// A TensorProto (raw_data or the typed fields) as a Tensor; Unimplemented for
/// types Attune cannot hold, InvalidArgument for inconsistent protos.
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto);
/// A serialized TensorProto file such as test_data_set_0/input_0.pb.
absl::StatusOr<Tensor> LoadTensorFile(const std::string& path);
/// A serialized ModelProto file.
absl::StatusOr<onnx::ModelProto> LoadModelFile(const std::string& path);
/// A node's attributes (graph-valued attributes are rejected).
absl::StatusOr<Attributes> AttributesFromNode(const onnx::NodeProto& node);

}  // namespace attune::testing
