#include "tools/profile.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "nlohmann/json.hpp"

namespace attune::cli {

absl::StatusOr<ProfileResult> ProfileRuns(const SessionImpl& session, const NamedTensors& inputs, int runs) {
  ProfileResult result;
  result.runs = runs;
  double offset_us = 0;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    NodeObserver observer = [&](const NodeTiming& t) {
      result.events.push_back({*t.node_name, *t.op_type, run, offset_us + t.start_us, t.duration_us});
    };
    RETURN_IF_ERROR(session.Run(inputs, &observer).status());
    offset_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
  }
  return result;
}

absl::Status WriteChromeTrace(const ProfileResult& profile, const std::string& path) {
  nlohmann::json events = nlohmann::json::array();
  for (const ProfileEvent& e : profile.events) {
    events.push_back({{"name", e.node},
                      {"cat", e.op_type},
                      {"ph", "X"},
                      {"ts", e.start_us},
                      {"dur", e.duration_us},
                      {"pid", 1},
                      {"tid", 1},
                      {"args", {{"op_type", e.op_type}, {"run", e.run}}}});
  }
  nlohmann::json trace = {{"traceEvents", events}, {"displayTimeUnit", "ms"}};
  std::ofstream out(path);
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write profile ", QuoteName(path)));
  out << trace.dump() << "\n";
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write profile ", QuoteName(path)));
  return absl::OkStatus();
}

std::string RenderOpSummary(const ProfileResult& profile) {
  struct Row {
    double total_us = 0;
    int nodes = 0;
  };
  std::map<std::string, Row> by_op;
  double total = 0;
  for (const ProfileEvent& e : profile.events) {
    by_op[e.op_type].total_us += e.duration_us;
    if (e.run == 0) ++by_op[e.op_type].nodes;
    total += e.duration_us;
  }
  std::vector<std::pair<std::string, Row>> rows(by_op.begin(), by_op.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.total_us > b.second.total_us; });
  const int runs = std::max(profile.runs, 1);
  std::string out = absl::StrFormat("%-24s %12s %8s %6s\n", "op type", "ms per run", "share", "nodes");
  for (const auto& [op, row] : rows)
    absl::StrAppendFormat(&out, "%-24s %12.3f %7.1f%% %6d\n", op, row.total_us / 1000.0 / runs,
                          total > 0 ? 100.0 * row.total_us / total : 0.0, row.nodes);
  absl::StrAppendFormat(&out, "%-24s %12.3f\n", "total", total / 1000.0 / runs);
  return out;
}

}  // namespace attune::cli
