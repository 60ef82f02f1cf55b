// The inspect report as one JSON object (keys documented in the README).
#pragma once

#include "nlohmann/json.hpp"
#include "engine/session_impl.h"

namespace attune::cli {

/// {model, inputs, outputs, ops_before, ops_after, fusions, rejected, passes,
/// iteration_cap_hit, stopped_after}, and the graph's nodes when the pipeline
/// was stopped early.
nlohmann::json ReportToJson(const std::string& model_path, const SessionImpl& session);

/// "float32[batch, seq, 64]".
std::string TensorInfoToString(const TensorInfo& info);

}  // namespace attune::cli
