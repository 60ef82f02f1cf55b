// Cast to and from the narrow types (float8, float4e2m1, int4/uint4,
// int2/uint2), which a tensor holds one element per byte.
#pragma once

#include <string>

#include "core/ir/narrow_types.h"
#include "ops/kernel.h"

namespace attune::elementwise {

/// Cast's `saturate` (opset 19) and `round_mode` (opset 25) attributes.
struct NarrowCastOptions {
  bool saturate = true;
  E8M0Rounding rounding = E8M0Rounding::kUp;
};

/// Writes x cast to `to` as output 0; one of the two types is narrow.
absl::Status CastWithNarrowType(KernelContext& ctx, const Tensor& x, ElementType to,
                                const NarrowCastOptions& options, const std::string& label);

}  // namespace attune::elementwise
