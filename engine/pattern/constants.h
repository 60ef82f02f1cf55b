// Reading constant data the way patterns need it: through Identity and
// Constant nodes, as numbers whatever the element type.
#pragma once

#include <optional>
#include <vector>

#include "attune/tensor.h"
#include "core/ir/graph.h"

namespace attune::pattern {

/// The constant data of `value`: its own, or that of a Constant node ("value"
/// attribute) or Identity chain producing it; nullptr when not constant.
const Tensor* ConstantOf(const Value* value);

/// Element `i` of a numeric or bool tensor as a double (nullopt for types
/// without a numeric reading).
std::optional<double> ElementAsDouble(const Tensor& tensor, int64_t i);
/// Every element as a double; nullopt for a non-numeric type.
std::optional<std::vector<double>> TensorAsDoubles(const Tensor& tensor);
/// The number every element holds, when there is at least one element and all
/// are equal (NaNs never equal); nullopt otherwise.
std::optional<double> UniformValue(const Tensor& tensor);
/// The elements of a 1-D or 0-D integer tensor (shapes, axes, perms).
std::optional<std::vector<int64_t>> TensorAsInts(const Tensor& tensor);

}  // namespace attune::pattern
