// Two late worker starts close together (a stall) send runs to one thread for
// a pause that doubles with every stall (one on-time region does not reset
// it; ten quiet seconds do); one late start alone does not; a probe reports
// its latest arrival, or a worker's wait for its core when that is longer;
// while paused, ParallelForRange runs on the calling thread; a oneDNN product
// counts as a region; the run delay read is the kernel's since the last call.
//
// The monitor's decisions are tested on a clock the tests step themselves
// (team_monitor_clock.h): nothing here depends on how long the machine took.
// How long threads actually wait for a shared core, and whether the load-time
// probe sees a busy machine, are measured by bench/team_monitor_bench.
#include "ops/common/team_monitor.h"

#include <omp.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "ops/common/parallel.h"
#include "ops/common/team_monitor_clock.h"
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

constexpr int64_t kMs = 1'000'000;

// The monitor's time while a TeamMonitorTest runs; atomic because workers of
// a parallel region read it.
std::atomic<int64_t> fake_now_ns{0};
int64_t FakeNow() { return fake_now_ns.load(std::memory_order_relaxed); }
void Advance(int64_t ns) { fake_now_ns.fetch_add(ns, std::memory_order_relaxed); }

class TeamMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake_now_ns = 1000 * 1000 * kMs;  // long after the monitor's zeros, as a steady clock is
    SetMonitorClock(&FakeNow);
    ResetTeamMonitor();
  }
  void TearDown() override {
    ResetTeamMonitor();
    SetMonitorClock(nullptr);
  }
};

// Two late starts in a row: what a busy core gives.
void Stall(int64_t lag_ns = kLateWorkerStartNs + 1) {
  ReportWorkerStartLag(lag_ns);
  ReportWorkerStartLag(lag_ns);
}

// One thread until `pause_ns` after now, all of them from then on.
void ExpectPauseOf(int64_t pause_ns) {
  Advance(pause_ns - 1);
  EXPECT_EQ(EffectiveThreads(4), 1) << "1 ns before the end of a " << pause_ns / kMs << " ms pause";
  Advance(1);
  EXPECT_EQ(EffectiveThreads(4), 4) << "at the end of a " << pause_ns / kMs << " ms pause";
}

TEST_F(TeamMonitorTest, StallPausesThreadsAndThePauseDoubles) {
  EXPECT_EQ(EffectiveThreads(2), 2);
  EXPECT_EQ(EffectiveThreads(1), 1);
  EXPECT_EQ(EffectiveThreads(0), 0);  // "all cores" is left to the caller

  Stall();
  EXPECT_EQ(EffectiveThreads(4), 1);
  ExpectPauseOf(50 * kMs);  // the first pause
  Advance(10 * kMs);        // past the 50 ms in which two late starts pair

  Stall(kLateWorkerStartNs * 10);
  ExpectPauseOf(100 * kMs);  // the second doubles
  Advance(10 * kMs);

  // One on-time region does not shorten the pause: the third stall pauses 200 ms.
  ReportWorkerStartLag(1000);
  Stall();
  ExpectPauseOf(200 * kMs);
  EXPECT_EQ(TeamStallCount() >= 3, true);

  // Ten seconds without a stall: the next pause is short again.
  Advance(10'000 * kMs + 1);
  ReportWorkerStartLag(1000);
  Stall();
  ExpectPauseOf(50 * kMs);
}

TEST_F(TeamMonitorTest, OneLateStartAloneIsNotAStall) {
  const int64_t before = TeamStallCount();
  ReportWorkerStartLag(kLateWorkerStartNs * 4);
  EXPECT_EQ(TeamStallCount(), before);
  EXPECT_EQ(EffectiveThreads(2), 2);
  Advance(50 * kMs + 1);
  ReportWorkerStartLag(kLateWorkerStartNs * 4);  // more than 50 ms after the first: alone too
  EXPECT_EQ(TeamStallCount(), before);
  for (int i = 0; i < 100; ++i) ReportWorkerStartLag(1000);  // regions on time do not pair it
  Advance(50 * kMs);
  ReportWorkerStartLag(kLateWorkerStartNs * 4);  // within 50 ms of the last: a stall
  EXPECT_EQ(TeamStallCount(), before + 1);
  EXPECT_EQ(EffectiveThreads(2), 1);
}

// One parallel region whose latest worker arrives `lag_ns` after the fork.
void Region(int64_t lag_ns) {
  WorkerStartProbe probe;
  probe.Arrive();  // a worker on time
  Advance(lag_ns);
  probe.Arrive();  // the latest
}

TEST_F(TeamMonitorTest, ProbeReportsTheLatestArrival) {
  const int64_t before = TeamStallCount();
  Region(0);  // the first region of the process: not judged
  Region(kLateWorkerStartNs);  // on time
  EXPECT_EQ(TeamStallCount(), before);
  EXPECT_EQ(EffectiveThreads(2), 2);
  Region(kLateWorkerStartNs + 1);  // a worker the scheduler kept waiting, twice
  Region(kLateWorkerStartNs + 1);
  EXPECT_EQ(TeamStallCount(), before + 1);
  EXPECT_EQ(EffectiveThreads(2), 1);
}

// A worker that started on time but waited for its core since its last
// probe (another process took it in the middle of a product) is late too.
TEST_F(TeamMonitorTest, AWorkerThatWaitedForItsCoreIsLateThoughItStartedOnTime) {
  const int64_t before = TeamStallCount();
  Region(0);  // the first region of the process: not judged
  {
    WorkerStartProbe probe;
    probe.Arrive();
    probe.Waited(kLateWorkerStartNs / 2);  // a short wait: not late
  }
  EXPECT_EQ(TeamStallCount(), before);
  for (int region = 0; region < 2; ++region) {
    WorkerStartProbe probe;
    probe.Arrive();
    probe.Waited(4 * kLateWorkerStartNs);
  }
  EXPECT_EQ(TeamStallCount(), before + 1);
  EXPECT_EQ(EffectiveThreads(2), 1);
}

// The first region after the team sat idle may wake sleeping workers, which
// takes long on a virtual machine and is not judged; a late start right after
// another region is a stall.
TEST_F(TeamMonitorTest, ARegionAfterAnIdleTeamIsNotJudged) {
  const int64_t before = TeamStallCount();
  Region(2 * kLateWorkerStartNs);  // the first region of the process: its workers may have been asleep
  EXPECT_EQ(TeamStallCount(), before);
  Advance(kWorkerSleepGapNs + 1);
  Region(2 * kLateWorkerStartNs);  // after an idle gap
  Advance(kWorkerSleepGapNs + 1);
  Region(2 * kLateWorkerStartNs);  // and another: two late starts, neither judged
  EXPECT_EQ(TeamStallCount(), before);
  EXPECT_EQ(EffectiveThreads(2), 2);
  Advance(kWorkerSleepGapNs);  // a gap no longer than that: the workers were spinning
  Region(2 * kLateWorkerStartNs);
  Region(2 * kLateWorkerStartNs);  // right after the last region
  EXPECT_EQ(TeamStallCount(), before + 1);  // those two are a stall
}

// A oneDNN product is a region too: the regions right after it are judged,
// as a prefill graph (products with small regions between) needs.
TEST_F(TeamMonitorTest, ARegionAfterAOneDnnProductIsJudged) {
  const int64_t k = 64, n = 64, m = 48;
  std::vector<float> b(k * n, 0.5f), a(m * k, 0.25f), c(m * n);
  OneDnnConstantMatMul::Options options;
  options.in_place = true;
  auto product = OneDnnConstantMatMul::Create(b.data(), k, n, options);
  ASSERT_TRUE(product.ok()) << product.status();
  Advance(kWorkerSleepGapNs + 1);
  EXPECT_TRUE(WorkersMayBeAsleep(MonitorNowNs()));
  ASSERT_TRUE((*product)->Run(a.data(), m, c.data(), 2).ok());
  EXPECT_FALSE(WorkersMayBeAsleep(MonitorNowNs()));
  EXPECT_EQ(c[0], 0.25f * 0.5f * k);
}

TEST_F(TeamMonitorTest, PausedRangesRunOnTheCallingThread) {
  Stall();
  std::vector<std::pair<int64_t, int64_t>> calls;
  bool in_parallel = true;
  ParallelForRange(1000, 1, 2, [&](int64_t begin, int64_t end) {
    calls.push_back({begin, end});
    in_parallel = omp_in_parallel() != 0;
  });
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, 0);
  EXPECT_EQ(calls[0].second, 1000);
  EXPECT_FALSE(in_parallel);
}

TEST_F(TeamMonitorTest, RangesCoverEverythingOnTwoThreads) {
  std::vector<int> hits(1000, 0);
  ParallelForRange(1000, 1, 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ++hits[i];
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

// The calling thread's run delay as the kernel counts it (schedstat's second field).
int64_t KernelRunDelayNs() {
  std::ifstream schedstat("/proc/thread-self/schedstat");
  int64_t on_cpu_ns = 0, waiting_ns = -1;
  schedstat >> on_cpu_ns >> waiting_ns;
  return waiting_ns;
}

// The wait reported is the kernel's run delay since the previous call, whatever
// the scheduler made of it: each call lies between the kernel's counts read
// just before and just after the two calls. Three threads spinning on one core
// make the delay more than nothing to compare; its size is not judged.
TEST(RunQueueWait, IsTheKernelsRunDelaySinceTheLastCall) {
  // A kernel without scheduler statistics has no file, or reports "0 0 0".
  std::ifstream schedstat("/proc/thread-self/schedstat");
  int64_t on_cpu_ns = 0;
  if (!(schedstat >> on_cpu_ns) || on_cpu_ns == 0) GTEST_SKIP() << "this kernel does not report run delays";
  std::thread([] {
    const int64_t before_first = KernelRunDelayNs();
    EXPECT_EQ(RunQueueWaitSinceLastProbeNs(), 0) << "a thread's first call is its baseline";
    int64_t after_last = KernelRunDelayNs();
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(sched_getcpu(), &one);
    const bool pinned = sched_setaffinity(0, sizeof(one), &one) == 0;
    std::atomic<bool> stop{false};
    std::vector<std::thread> rivals;
    for (int i = 0; pinned && i < 2; ++i)
      rivals.emplace_back([&] {
        sched_setaffinity(0, sizeof(one), &one);
        while (!stop.load(std::memory_order_relaxed)) {
        }
      });
    int64_t before_last = before_first;
    for (int call = 0; call < 3; ++call) {
      const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
      while (std::chrono::steady_clock::now() < end) {
      }
      const int64_t before = KernelRunDelayNs();
      const int64_t waited = RunQueueWaitSinceLastProbeNs();
      const int64_t after = KernelRunDelayNs();
      EXPECT_GE(waited, before - after_last) << "call " << call;
      EXPECT_LE(waited, after - before_last) << "call " << call;
      before_last = before;
      after_last = after;
    }
    stop = true;
    for (std::thread& t : rivals) t.join();
  }).join();
}

}  // namespace
}  // namespace attune
