// The `reduction` attribute of ScatterND and ScatterElements: which values an
// opset allows, and the loop that combines updates into the output.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "attune/element_type.h"
#include "ops/kernel.h"

namespace attune::scatter {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

/// The node's reduction: absent or "none" at any opset, "add" and "mul" from
/// opset 16, "max" and "min" from 18; InvalidArgument naming the node otherwise.
absl::StatusOr<ScatterReduction> ReadScatterReduction(const KernelInfo& info, const std::string& label);

/// dst[i] = reduce(dst[i], src[i]) for i in [0, n), on elements of one type
/// (kNone: dst[i] = src[i]).
using CombineFn = void (*)(void* dst, const void* src, int64_t n);

/// The combine loop for `type`; InvalidArgument naming `what` when the type
/// is not one the engine stores.
absl::StatusOr<CombineFn> SelectCombine(ElementType type, ScatterReduction reduction, const std::string& what);

}  // namespace attune::scatter
