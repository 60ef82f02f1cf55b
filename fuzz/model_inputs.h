// Small inputs for a fuzzed model: every symbolic or unknown dim gets a value
// chosen by the caller (one value per symbol name, so the plan's symbol check
// passes), and floats come from a seeded generator so that a run repeats
// exactly. Inputs whose element count would pass `max_elements` are refused,
// which keeps each fuzz run small.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>

#include "attune/session.h"

namespace attune::fuzz {

/// The value of a dim that has no number: its symbol ("" when unnamed).
using DimChooser = std::function<int64_t(const std::string& symbol)>;

inline std::optional<NamedTensors> MakeInputs(const Session& session, const DimChooser& choose, uint32_t seed,
                                              int64_t max_elements = int64_t{1} << 16) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-2.0f, 2.0f);
  std::map<std::string, int64_t> symbols;
  NamedTensors inputs;
  for (const TensorInfo& info : session.inputs()) {
    std::vector<int64_t> shape;
    if (info.has_shape) {
      for (size_t d = 0; d < info.shape.size(); ++d) {
        if (info.shape[d] >= 0) {
          shape.push_back(info.shape[d]);
          continue;
        }
        const std::string& symbol = d < info.shape_symbols.size() ? info.shape_symbols[d] : std::string();
        if (symbol.empty()) {
          shape.push_back(choose(symbol));
          continue;
        }
        auto [it, fresh] = symbols.try_emplace(symbol, 0);
        if (fresh) it->second = choose(symbol);
        shape.push_back(it->second);
      }
    }
    int64_t elements = 1;
    for (const int64_t d : shape) {
      if (d > max_elements) return std::nullopt;
      elements *= d;
      if (elements > max_elements) return std::nullopt;
    }
    absl::StatusOr<Tensor> tensor = Tensor::Create(info.type, shape);
    if (!tensor.ok()) return std::nullopt;  // e.g. a string input: nothing to fuzz with
    if (info.type == ElementType::kFloat32) {
      for (float& v : tensor->values<float>()) v = uniform(rng);
    } else if (info.type == ElementType::kBool) {
      for (bool& v : tensor->values<bool>()) v = (rng() & 3) != 0;
    } else if (info.type == ElementType::kInt64) {
      for (int64_t& v : tensor->values<int64_t>()) v = static_cast<int64_t>(rng() % 8);
    }
    inputs.emplace_back(info.name, *std::move(tensor));
  }
  return inputs;
}

}  // namespace attune::fuzz
