// attune bench: latency statistics, peak memory and an optional per-node profile.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/common/status_macros.h"
#include "engine/session_access.h"
#include "nlohmann/json.hpp"
#include "ops/common/team_monitor.h"
#include "tools/bench_inputs.h"
#include "tools/command_common.h"
#include "tools/commands.h"
#include "tools/weights_accuracy.h"
#include "tools/profile.h"
#include "tools/work_count.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune bench MODEL.onnx [--input NAME=FILE]... [--shape NAME=AxBxC]... [--dim SYMBOL=N]... [options]\n"
    "\n"
    "Times repeated runs. Inputs not given with --input are random, shaped by --shape or by the model's\n"
    "declared shape with its symbols bound by --dim; integer inputs that index a table stay below its size.\n"
    "\n"
    "  --input NAME=FILE        a graph input from .npy or .pb (repeatable)\n"
    "  --shape NAME=AxBxC       the shape of a generated input (repeatable)\n"
    "  --dim SYMBOL=N           a value for a symbolic dimension such as seq (repeatable)\n"
    "  --warmup W               untimed runs first (default 3)\n"
    "  --iterations K           timed runs (default 20)\n"
    "  --seconds S              time runs for S seconds instead of a fixed count\n"
    "  --json                   print one JSON object: median_ms, min_ms, max_ms, p90_ms, p99_ms, load_ms,\n"
    "                           gflop, weight_mb, fused_attention, team_stalls, latencies_ms, ... (see docs/cli.md)\n"
    "  --profile FILE           write a Chrome trace (chrome://tracing, Perfetto) of 3 more runs and\n"
    "                           print the time per op type\n";

double Percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  const double rank = p * (sorted.size() - 1);
  const size_t lo = static_cast<size_t>(rank);
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (rank - lo);
}

// Peak resident set size of this process (VmHWM), in MiB.
double PeakRssMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

void DrawProgress(int done, int total, double elapsed_s) {
  const int width = 30;
  const int filled = total > 0 ? done * width / total : 0;
  std::fprintf(stderr, "\r[%s%s] %d/%d  %.1fs", std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(), done, total, elapsed_s);
  std::fflush(stderr);
}

absl::Status Bench(const Args& args) {
  if (args.positionals().size() != 1) return absl::InvalidArgumentError("bench needs exactly one MODEL.onnx");
  ASSIGN_OR_RETURN(SessionOptions options, SessionOptionsFromArgs(args));
  ASSIGN_OR_RETURN(int64_t warmup, args.Int("warmup", 3));
  ASSIGN_OR_RETURN(int64_t iterations, args.Int("iterations", 0));
  ASSIGN_OR_RETURN(double seconds, args.Double("seconds", 0));
  if (iterations == 0 && seconds == 0) iterations = 20;
  if (iterations > 10'000'000 || warmup > 1'000'000) return absl::InvalidArgumentError("iteration count too large");
  const std::string model_path = args.positionals()[0];
  // Load time: the model file read, imported, optimised and compiled.
  const auto load_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(model_path, options));
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start).count();
  ASSIGN_OR_RETURN(NamedTensors inputs, BuildBenchInputs(*session, args, options.max_tensor_bytes));

  const SessionImpl& impl = GetSessionImpl(*session);
  // The first warm-up run (or, without one, a run after the timed ones) counts the work.
  RunWork work;
  for (int64_t i = 0; i < warmup; ++i) {
    if (i == 0) {
      ASSIGN_OR_RETURN(work, CountRunWork(impl, inputs));
    } else {
      RETURN_IF_ERROR(impl.Run(inputs).status());
    }
  }

  const bool tty = isatty(STDERR_FILENO) && !args.Has("json");
  std::vector<double> latencies;
  const int64_t stalls_before = TeamStallCount();
  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  const int total = iterations > 0 ? static_cast<int>(iterations) : 0;
  while (true) {
    if (iterations > 0 && static_cast<int64_t>(latencies.size()) >= iterations) break;
    if (iterations == 0 && elapsed() >= seconds && !latencies.empty()) break;
    const auto t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(impl.Run(inputs).status());
    latencies.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (tty) DrawProgress(static_cast<int>(latencies.size()), total > 0 ? total : static_cast<int>(latencies.size()),
                          elapsed());
  }
  if (tty) std::fputs("\n", stderr);
  const int64_t team_stalls = TeamStallCount() - stalls_before;
  if (warmup == 0) {
    ASSIGN_OR_RETURN(work, CountRunWork(impl, inputs));
  }

  if (auto profile_path = args.Value("profile")) {
    ASSIGN_OR_RETURN(ProfileResult profile, ProfileRuns(impl, inputs, 3));
    RETURN_IF_ERROR(WriteChromeTrace(profile, *profile_path));
    if (!args.Has("json")) std::fputs(RenderOpSummary(profile).c_str(), stdout);
  }

  std::vector<double> sorted = latencies;
  std::sort(sorted.begin(), sorted.end());
  const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / sorted.size();
  const double median = Percentile(sorted, 0.5);
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const double peak = PeakRssMb();
  const int64_t fused_attention = FusedAttentionCount(impl);
  if (args.Has("json")) {
    nlohmann::json j = {{"model", model_path},
                        {"median_ms", median},
                        {"mean_ms", mean},
                        {"min_ms", sorted.front()},
                        {"max_ms", sorted.back()},
                        {"p90_ms", Percentile(sorted, 0.9)},
                        {"p99_ms", Percentile(sorted, 0.99)},
                        {"iterations", sorted.size()},
                        {"warmup", warmup},
                        {"threads", threads},
                        {"throughput_per_s", 1000.0 / mean},
                        {"peak_rss_mb", peak},
                        {"fuse", options.fuse},
                        {"load_ms", load_ms},
                        {"fused_attention", fused_attention},
                        {"gflop", work.flop / 1e9},
                        {"weight_mb", work.weight_bytes / 1e6},
                        {"team_stalls", team_stalls},
                        {"latencies_ms", latencies}};
    std::printf("%s\n", j.dump().c_str());
    PrintWeightAccuracy(args, stderr, model_path, options, inputs);
    return absl::OkStatus();
  }
  std::printf("model       %s\n", model_path.c_str());
  for (const auto& [name, t] : inputs) std::printf("input       %s %s\n", name.c_str(), t.DebugString().c_str());
  std::printf("threads     %d   fusion %s   iterations %zu (+%lld warm-up)\n", threads, options.fuse ? "on" : "off",
              sorted.size(), static_cast<long long>(warmup));
  std::printf("latency ms  median %.3f  mean %.3f  min %.3f  max %.3f  p90 %.3f  p99 %.3f\n", median, mean,
              sorted.front(), sorted.back(), Percentile(sorted, 0.9), Percentile(sorted, 0.99));
  std::printf("throughput  %.2f runs/s\npeak RSS    %.1f MiB\n", 1000.0 / mean, peak);
  std::printf("load        %.1f ms   fused attention %lld\n", load_ms, static_cast<long long>(fused_attention));
  std::printf("work        %.4g GFLOP per run (%.4g GFLOP/s at the median)   weights read %.4g MB\n",
              work.flop / 1e9, median > 0 ? work.flop / 1e6 / median : 0.0, work.weight_bytes / 1e6);
  if (team_stalls > 0)
    std::printf("team        %lld stalls: workers started late (a busy core?); runs used one thread after each\n",
                static_cast<long long>(team_stalls));
  PrintWeightAccuracy(args, stdout, model_path, options, inputs);
  return absl::OkStatus();
}

}  // namespace

int BenchCommand(int argc, char** argv) {
  FlagSpec spec{{"input", "shape", "dim", "warmup", "iterations", "seconds", "profile"}, {"json"}};
  AddSessionFlags(spec);
  return RunSubcommand(argc, argv, kUsage, spec, Bench);
}

}  // namespace attune::cli
