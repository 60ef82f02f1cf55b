// Finding a decoder's convention (which input is input_ids, which output pairs
// with which past input) from graph input/output names and shapes.
#pragma once

#include <vector>

#include "absl/status/statusor.h"
#include "attune/generator.h"
#include "attune/session.h"
#include "core/ir/graph.h"

namespace attune {

/// The convention of a graph with these inputs and outputs. `graph`, when
/// given, is searched for the vocabulary and context sizes (embedding tables).
absl::StatusOr<DecoderSignature> FindSignature(const std::vector<TensorInfo>& inputs,
                                               const std::vector<TensorInfo>& outputs, const Graph* graph,
                                               const NameOverrides& overrides, bool require_past);

}  // namespace attune
