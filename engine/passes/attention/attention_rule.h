// The attention rule's check and rewrite: given a structural match of one
// variant, prove everything the fused op assumes (softmax axis, constant
// scale, mask semantics, operand layouts) and write the rewrite as a plan,
// or return the first check that failed.
#pragma once

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "attune/fusion_report.h"
#include "core/ir/graph.h"
#include "engine/passes/attention/attention_patterns.h"
#include "engine/passes/pass.h"
#include "engine/pattern/match.h"
#include "engine/rewrite/rewrite_plan.h"

namespace attune::attention {

/// A Where fill at or below this hides its key as surely as -inf does.
inline constexpr double kHidingFill = -1e4;

struct AttentionRewrite {
  RewritePlan plan;
  /// The report entry, filled but for the node name and the replaced nodes.
  FusionRecord record;
  /// The reason the mask is not causal when it is fused as an explicit mask.
  std::optional<std::string> not_causal_reason;
  /// Sequence lengths verify mode tries first: beyond the replaced mask's
  /// largest constant (window, offset, buffer) and beyond its window.
  std::vector<int64_t> verify_lengths;
  /// Inputs verify mode fills as key padding masks (ones with a few keys padded).
  std::vector<std::string> verify_padding_inputs;
  /// Element type of the fused output (verify mode's tolerance depends on it).
  ElementType output_type = ElementType::kUndefined;
};

class MaskChainMemo;

/// The rewrite for a match of `variant`, or the reason it must not be fused.
/// `memo` (may be null) keeps the mask proofs across candidates and rounds.
std::variant<AttentionRewrite, std::string> CheckAttention(const Graph& graph, const pattern::Match& match,
                                                           const AttentionVariant& variant,
                                                           const PassContext& context,
                                                           MaskChainMemo* memo = nullptr);

}  // namespace attune::attention
