// The quantized products of a graph, for `attune inspect`: one entry per
// node with its format, bits, block, symmetry and how its activations enter.
#pragma once

#include <string>

#include "core/ir/graph.h"
#include "nlohmann/json.hpp"

namespace attune::cli {

/// [{node, format, bits, block_size, symmetry, accuracy_level, activations, k, n}, ...]
nlohmann::json QuantizedProductsToJson(const Graph& graph);

/// "Quantized products (N)" and one line per kind with its count.
std::string QuantizedProductsText(const nlohmann::json& products);

}  // namespace attune::cli
