// Relations between input dims that a decoder's convention fixes but its
// export names apart: torch.onnx.export gives attention_mask's length its own
// symbol ("total_seq") beside the cache's ("past_seq") and the tokens'
// ("seq"). Shape analysis cannot then prove that a slice of the mask by the
// cache length has the tokens' length, and an attention block fed by such a
// slice (GPTBigCode's positions, cumsum(attention_mask)[:, past:past+seq])
// stays unfused. The session optimises a second time with the relation
// written into the graph, keeps that plan when it fuses more, checks the
// relation on every run, and runs the plan without it when a run breaks it.
#pragma once

#include <string>
#include <vector>

#include "attune/tensor.h"
#include "core/ir/dim.h"
#include "core/ir/graph.h"
#include "engine/exec/plan.h"

namespace attune {

/// One assumed relation: graph input `input`'s dimension `axis`, declared as
/// the symbol `symbol`, equals `equals`, an expression over symbols that other
/// inputs declare as whole dims (so every run can check it).
struct DimAssumption {
  std::string input;
  int axis = 0;
  std::string symbol;
  Dim equals;
  std::string why;  // the convention it comes from
  /// "attention_mask dim 1 (total_seq) = past_seq+seq: <why>".
  std::string ToString() const;
};

/// The relations of a decoder's convention that `graph` (as imported) does
/// not state: attention_mask and position_ids cover the cached and the new
/// tokens (past + seq, or seq without a cache). Empty when the graph is not a
/// decoder, or when its inputs already share the symbols.
std::vector<DimAssumption> FindDecoderDimAssumptions(const Graph& graph);

/// Writes the relations into `graph`: every shape that names an assumed
/// symbol names its expression instead.
void ApplyDimAssumptions(const std::vector<DimAssumption>& assumptions, Graph& graph);

/// True when `inputs` (in the order of `declared`, the graph inputs as
/// imported) satisfy every assumption. An assumption whose expression cannot
/// be evaluated from these inputs does not hold.
bool DimAssumptionsHold(const std::vector<DimAssumption>& assumptions, const std::vector<ValueInfo>& declared,
                        const std::vector<Tensor>& inputs);

}  // namespace attune
