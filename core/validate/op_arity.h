// How many inputs and outputs each op Attune runs takes, per opset: the
// ONNX schemas' min/max counts (and attune.MultiHeadAttention's own), checked
// at import so that no pass or kernel meets a node of the wrong shape.
#pragma once

#include <climits>
#include <string_view>

namespace attune {

struct OpArity {
  int since_opset;  // the entry holds from this opset until the next entry's
  int min_inputs, max_inputs;
  int min_outputs, max_outputs;
};

/// Stands for "any number" in max_inputs / max_outputs.
inline constexpr int kVariadic = INT_MAX;

/// The arity of `op_type` in `domain` ("" for ai.onnx) at `opset`, or nullptr
/// when Attune has no entry (an op it does not run, or an opset before the
/// first entry; the kernel registry reports those).
const OpArity* FindOpArity(std::string_view domain, std::string_view op_type, int opset);

}  // namespace attune
