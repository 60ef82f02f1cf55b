// Per-node profiling for attune bench: Chrome trace output and a per-op summary.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "engine/session_impl.h"

namespace attune::cli {

struct ProfileEvent {
  std::string node;
  std::string op_type;
  int run;
  double start_us;  // since the first profiled run started
  double duration_us;
};

struct ProfileResult {
  std::vector<ProfileEvent> events;
  int runs = 0;
};

/// Runs the model `runs` times, recording every node's start and duration.
absl::StatusOr<ProfileResult> ProfileRuns(const SessionImpl& session, const NamedTensors& inputs, int runs);
/// Writes the events as Chrome trace JSON (chrome://tracing, Perfetto).
absl::Status WriteChromeTrace(const ProfileResult& profile, const std::string& path);
/// "op type, total ms per run, share, node count" table, heaviest first.
std::string RenderOpSummary(const ProfileResult& profile);

}  // namespace attune::cli
