// The tensor an ONNX Constant node produces, computed from its attributes; shared
// by the importer (to type the node's output) and the Constant kernel.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"

namespace attune {

/// Exactly one of `value` (tensor), `value_float`, `value_floats`, `value_int`,
/// `value_ints` must be set: floats become float32, ints int64, scalars rank 0,
/// lists rank 1. `value_string(s)` and `sparse_value` are Unimplemented; none or
/// several set is InvalidArgument. `node` ("Constant 'c'") prefixes the errors.
absl::StatusOr<Tensor> ConstantValueFromAttributes(const Attributes& attributes, std::string_view node);

}  // namespace attune
