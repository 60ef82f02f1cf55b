// Internal to importer/: ONNX TypeProto <-> element type and symbolic shape.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "attune/element_type.h"
#include "core/ir/dim.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// What a TypeProto says about a value.
struct TypeInfo {
  /// False for sequence, map, optional, sparse tensor or a missing type.
  bool is_tensor = false;
  /// "tensor", "sequence", "map", "optional", "sparse tensor" or "no type".
  std::string kind;
  /// The ONNX data_type code (0 when unknown).
  int32_t elem_type = 0;
  /// Dims as known / symbol (dim_param) / unknown; nullopt when the rank is unknown.
  std::optional<SymbolicShape> shape;
};

TypeInfo ReadType(const onnx::TypeProto& type);

/// A tensor type; an unknown shape writes no shape, unknown dims write neither value nor param.
void WriteTensorType(ElementType type, const std::optional<SymbolicShape>& shape, onnx::TypeProto* proto);

}  // namespace attune::importer
