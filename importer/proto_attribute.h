// Internal to importer/: onnx::AttributeProto <-> AttributeValue.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/ir/attribute.h"
#include "importer/proto_tensor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// The attribute's declared type, or the one its set field implies when an old
/// model omits `type`; UNDEFINED when neither says.
onnx::AttributeProto::AttributeType AttributeTypeOf(const onnx::AttributeProto& attribute);

/// Converts one attribute of node `node_name` (op `op_type`). GRAPH/GRAPHS give
/// Unimplemented "subgraph op <op> is not supported yet (node '<name>')"; sparse
/// tensors, TENSORS and TYPE_PROTO(S) are Unimplemented too.
absl::StatusOr<AttributeValue> AttributeFromProto(const onnx::AttributeProto& attribute, std::string_view op_type,
                                                  std::string_view node_name, const TensorSource& source);

/// Writes `value` under `name` with its type set.
void AttributeToProto(const std::string& name, const AttributeValue& value, onnx::AttributeProto* proto);

}  // namespace attune::importer
