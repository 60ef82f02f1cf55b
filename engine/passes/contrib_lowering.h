// The factory of the pass that lowers ONNX Runtime's vendor ops (engine/passes/contrib/).
#pragma once

#include <memory>

#include "engine/passes/pass.h"

namespace attune {

/// ONNX Runtime's vendor ops (com.microsoft norms, activations, FusedMatMul,
/// GroupQueryAttention) lowered onto standard ops and Attune's fused ops.
std::unique_ptr<Pass> MakeContribLoweringPass();

}  // namespace attune
