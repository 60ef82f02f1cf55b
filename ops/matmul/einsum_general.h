// The general Einsum: for every output element, a sum over every combination
// of the contracted labels. Slow, but right for any equation (diagonals,
// several operands, broadcasting).
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "attune/tensor.h"
#include "ops/matmul/einsum_equation.h"

namespace attune {

/// Whether EinsumGeneral handles this element type.
bool EinsumGeneralSupports(ElementType type);

/// out (allocated with binding.output_shape) = the einsum of `inputs`.
/// Floating types accumulate in double, integers in wrapping 64-bit.
absl::Status EinsumGeneral(const EinsumBinding& binding, const std::vector<const Tensor*>& inputs, Tensor& out,
                           int threads);

}  // namespace attune
