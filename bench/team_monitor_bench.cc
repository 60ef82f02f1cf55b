// What the team monitor (ops/common/team_monitor.h) reads from the machine,
// measured rather than asserted (a busy machine changes both):
//  - RunQueueWait: the calling thread spins 90 ms pinned to one core with
//    `rivals` threads spinning there too; WaitedShare is the part of the time
//    from probe to probe the kernel counted it as waiting for the core (about
//    rivals/(rivals+1) on a quiet machine; more when other processes share it).
//  - CoresContended: the load-time probe on a team of two, with `rivals`
//    threads spinning on every core or none; Contended is the share of probes
//    that found the cores held.
//
//   team_monitor_bench --benchmark_filter=RunQueueWait
#include <benchmark/benchmark.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "ops/common/team_monitor.h"

namespace attune {
namespace {

// Threads spinning until destroyed, each pinned to `cpus` when given.
class Rivals {
 public:
  Rivals(int count, const cpu_set_t* cpus) {
    for (int i = 0; i < count; ++i)
      threads_.emplace_back([this, cpus] {
        if (cpus != nullptr) sched_setaffinity(0, sizeof(*cpus), cpus);
        while (!stop_.load(std::memory_order_relaxed)) {
        }
      });
  }
  ~Rivals() {
    stop_ = true;
    for (std::thread& t : threads_) t.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::vector<std::thread> threads_;
};

void SpinFor(std::chrono::milliseconds ms) {
  const auto end = std::chrono::steady_clock::now() + ms;
  while (std::chrono::steady_clock::now() < end) {
  }
}

void BM_RunQueueWait(benchmark::State& state) {
  cpu_set_t before, one;
  sched_getaffinity(0, sizeof(before), &before);
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) {
    state.SkipWithError("threads cannot be pinned here");
    return;
  }
  double waited_ns = 0, spun_ns = 0;
  {
    Rivals rivals(static_cast<int>(state.range(0)), &one);
    for (auto _ : state) {
      RunQueueWaitSinceLastProbeNs();  // the baseline
      const auto start = std::chrono::steady_clock::now();
      SpinFor(std::chrono::milliseconds(90));
      waited_ns += static_cast<double>(RunQueueWaitSinceLastProbeNs());
      spun_ns += std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    }
  }
  sched_setaffinity(0, sizeof(before), &before);
  state.counters["WaitedShare"] = waited_ns / spun_ns;
}
BENCHMARK(BM_RunQueueWait)->Arg(0)->Arg(2)->ArgName("rivals")->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

void BM_CoresContended(benchmark::State& state) {
  const int count = state.range(0) == 0 ? 0 : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  double contended = 0, probes = 0;
  {
    Rivals rivals(count, nullptr);
    for (auto _ : state) {
      contended += CoresContended(2) ? 1 : 0;
      probes += 1;
    }
  }
  state.counters["Contended"] = contended / probes;
}
BENCHMARK(BM_CoresContended)->Arg(0)->Arg(1)->ArgName("rivals_on_every_core")->Iterations(5)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace attune

BENCHMARK_MAIN();
