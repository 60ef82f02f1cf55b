// Checks and rewrite steps the op fusion rules share.
#pragma once

#include <optional>
#include <string>

#include "core/ir/graph.h"
#include "engine/pattern/match.h"
#include "engine/passes/op_fusion/op_rule.h"

namespace attune::op_fusion {

/// Why a chain of element type `type` is not fused: the fused kernels are
/// checked against their subgraphs for float32 and float16 only.
std::optional<std::string> CheckFusedType(const Value& x);

/// Why the matched nodes might not compute a tensor of x's shape: every
/// operand they read from outside the match, other than x, must be a
/// constant of one element and no more dims than x (else it would
/// broadcast x to a larger shape, which the fused op would not). Operands
/// in `ignored` (a norm's weight, a reduction's axes) are left to the rule.
std::optional<std::string> CheckScalarOperands(const pattern::Match& match, const Value& x,
                                               const std::vector<const Value*>& ignored = {});

/// A value's shape for a reason: "[batch, seq, 768]", or "(shape unknown)".
std::string ShapeText(const Value& v);

/// The plan that replaces `root` by op(inputs) with `attributes`, a new
/// value of root's type and shape, named after root.
OpRewrite SingleNodeRewrite(const Value& root, const std::string& op, std::vector<std::string> inputs,
                            Attributes attributes);

}  // namespace attune::op_fusion
