// The fused op must fail where the subgraph it replaces fails: the score
// MatMul Q·Kᵀ and the output MatMul P·V broadcast their leading dims by
// numpy rules, and a graph whose dims do not broadcast is a shape error,
// never grouped-query attention. The fused op also takes no batch broadcast.
#pragma once

#include <optional>
#include <string>

#include "core/ir/graph.h"

namespace attune::attention {

/// Why `matmul` (Q·Kᵀ or P·V, `rank` 3 or 4) does not provably compute what
/// the fused op does: its operands' batch dims must be provably equal, and
/// their head dims equal or 1 on the right operand (one K/V head broadcast
/// to every query head). A dim pair that cannot broadcast at all is named as
/// the shape error it is. nullopt when the MatMul is what the fused op does.
std::optional<std::string> CheckMatMulBroadcast(const Node& matmul, int rank, const char* left, const char* right);

/// Why the mask (`mask`, read by the Where or Add on the scores) would not
/// keep the scores' shape: a dim of the mask that is known to differ from
/// the scores' and is not 1 either enlarges the scores or fails to broadcast.
std::optional<std::string> CheckMaskBroadcast(const Value* mask, const Value* scores);

}  // namespace attune::attention
