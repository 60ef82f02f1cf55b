// The inspect report for a terminal: aligned columns, colour only when asked.
#pragma once

#include <string>

#include "nlohmann/json.hpp"

namespace attune::cli {

/// Renders the JSON report (ReportToJson) as text.
std::string RenderTextReport(const nlohmann::json& report, bool colour);

}  // namespace attune::cli
