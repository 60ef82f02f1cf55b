// Two late worker starts close together (a stall) send runs to one thread for
// a pause that doubles with every stall (one on-time region does not reset
// it); one late start alone does not; a probe reports its latest arrival, or
// a worker's wait for its core when that is longer (measured from the
// kernel's run delay);
// while paused, ParallelForRange runs on the calling thread; a oneDNN product
// counts as a region; the load-time probe sees cores that others hold.
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
#include "ops/matmul/onednn_matmul.h"

namespace attune {
namespace {

class TeamMonitorTest : public ::testing::Test {
 protected:
  void SetUp() override { ResetTeamMonitor(); }
  void TearDown() override { ResetTeamMonitor(); }
};

// Runs `check` unless more than `budget_ms` passed since `start`: a test
// machine that stalls that long cannot tell a pause from its end.
template <typename Fn>
void WithinMs(int64_t start_ns, int64_t budget_ms, const Fn& check) {
  if (MonitorNowNs() - start_ns < budget_ms * 1'000'000) check();
}

// Two late starts in a row: what a busy core gives.
void Stall(int64_t lag_ns = kLateWorkerStartNs + 1) {
  ReportWorkerStartLag(lag_ns);
  ReportWorkerStartLag(lag_ns);
}

TEST_F(TeamMonitorTest, StallPausesThreadsAndThePauseDoubles) {
  EXPECT_EQ(EffectiveThreads(2), 2);
  EXPECT_EQ(EffectiveThreads(1), 1);
  EXPECT_EQ(EffectiveThreads(0), 0);  // "all cores" is left to the caller

  int64_t t0 = MonitorNowNs();
  Stall();
  WithinMs(t0, 40, [] { EXPECT_EQ(EffectiveThreads(4), 1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(EffectiveThreads(4), 4);  // the first pause is 50 ms

  t0 = MonitorNowNs();
  Stall(kLateWorkerStartNs * 10);  // a second stall: 100 ms
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  WithinMs(t0, 90, [] { EXPECT_EQ(EffectiveThreads(4), 1); });
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  EXPECT_EQ(EffectiveThreads(4), 4);

  // One on-time region does not shorten the pause: the third stall pauses 200 ms.
  ReportWorkerStartLag(1000);
  t0 = MonitorNowNs();
  Stall();
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  WithinMs(t0, 190, [] { EXPECT_EQ(EffectiveThreads(4), 1); });
  EXPECT_EQ(TeamStallCount() >= 3, true);
}

TEST_F(TeamMonitorTest, OneLateStartAloneIsNotAStall) {
  const int64_t before = TeamStallCount();
  ReportWorkerStartLag(kLateWorkerStartNs * 4);
  EXPECT_EQ(TeamStallCount(), before);
  EXPECT_EQ(EffectiveThreads(2), 2);
  for (int i = 0; i < 100; ++i) ReportWorkerStartLag(1000);  // regions on time do not pair it
  ReportWorkerStartLag(kLateWorkerStartNs * 4);  // within 50 ms of the first: a stall
  EXPECT_EQ(TeamStallCount(), before + 1);
}

TEST_F(TeamMonitorTest, ProbeReportsTheLatestArrival) {
  const int64_t before = TeamStallCount();
  {
    WorkerStartProbe probe;
    probe.Arrive();  // on time
  }
  EXPECT_EQ(TeamStallCount(), before);
  EXPECT_EQ(EffectiveThreads(2), 2);
  for (int region = 0; region < 2; ++region) {
    WorkerStartProbe probe;
    std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kLateWorkerStartNs));
    probe.Arrive();  // a worker the scheduler kept waiting, twice
  }
  EXPECT_EQ(TeamStallCount(), before + 1);
}

// A worker that started on time but waited for its core since its last
// probe (another process took it in the middle of a product) is late too.
TEST_F(TeamMonitorTest, AWorkerThatWaitedForItsCoreIsLateThoughItStartedOnTime) {
  const int64_t before = TeamStallCount();
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

// Three threads spinning on one core: each waits for it about two thirds of
// the time, and the calling thread's wait is what it reports.
TEST(RunQueueWait, ThreadsSharingOneCoreWaitForIt) {
  // A kernel without scheduler statistics has no file, or reports "0 0 0".
  std::ifstream schedstat("/proc/thread-self/schedstat");
  int64_t on_cpu_ns = 0;
  if (!(schedstat >> on_cpu_ns) || on_cpu_ns == 0) GTEST_SKIP() << "this kernel does not report run delays";
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(sched_getcpu(), &one);
  if (sched_setaffinity(0, sizeof(one), &one) != 0) GTEST_SKIP() << "threads cannot be pinned here";
  RunQueueWaitSinceLastProbeNs();  // the baseline
  std::atomic<bool> stop{false};
  auto spin_for = [](std::chrono::milliseconds ms) {
    const auto end = std::chrono::steady_clock::now() + ms;
    while (std::chrono::steady_clock::now() < end) {
    }
  };
  std::vector<std::thread> rivals;
  for (int i = 0; i < 2; ++i)
    rivals.emplace_back([&] {
      sched_setaffinity(0, sizeof(one), &one);
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  spin_for(std::chrono::milliseconds(90));
  const int64_t waited = RunQueueWaitSinceLastProbeNs();
  stop = true;
  for (std::thread& t : rivals) t.join();
  sched_setaffinity(0, sizeof(before), &before);
  EXPECT_GT(waited, 10'000'000) << "ns waited for the core in 90 ms shared three ways";
  spin_for(std::chrono::milliseconds(5));
  EXPECT_LT(RunQueueWaitSinceLastProbeNs(), 5'000'000) << "the wait is counted from the last call";
}

// With a rival spinning for every core, a team of two has to wait for its
// cores: the load-time probe sees them contended.
TEST(CoreProbe, ATeamOnCoresThatOthersHoldSeesThemContended) {
  std::ifstream schedstat("/proc/thread-self/schedstat");
  int64_t on_cpu_ns = 0;
  if (!(schedstat >> on_cpu_ns) || on_cpu_ns == 0) GTEST_SKIP() << "this kernel does not report run delays";
  std::atomic<bool> stop{false};
  std::vector<std::thread> rivals;
  for (unsigned i = 0; i < std::max(1u, std::thread::hardware_concurrency()); ++i)
    rivals.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  const bool contended = CoresContended(2);
  stop = true;
  for (std::thread& t : rivals) t.join();
  EXPECT_TRUE(contended);
}

// The first region after the team sat idle may wake sleeping workers, which
// takes long on a virtual machine and is not judged; a late start right after
// another region is a stall.
TEST_F(TeamMonitorTest, ARegionAfterAnIdleTeamIsNotJudged) {
  const int64_t before = TeamStallCount();
  {
    WorkerStartProbe probe;
    std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kLateWorkerStartNs));
    probe.Arrive();  // the first region of the process: its workers may have been asleep
  }
  EXPECT_EQ(TeamStallCount(), before);
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kWorkerSleepGapNs));
  {
    WorkerStartProbe probe;
    std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kLateWorkerStartNs));
    probe.Arrive();  // after an idle gap
  }
  EXPECT_EQ(TeamStallCount(), before);
  EXPECT_EQ(EffectiveThreads(2), 2);
  for (int region = 0; region < 2; ++region) {
    WorkerStartProbe probe;
    std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kLateWorkerStartNs));
    probe.Arrive();  // right after the last region: the workers were spinning
  }
  EXPECT_EQ(TeamStallCount(), before + 1);  // those two are a stall; the two after idle gaps were not judged
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
  std::this_thread::sleep_for(std::chrono::nanoseconds(2 * kWorkerSleepGapNs));
  EXPECT_TRUE(WorkersMayBeAsleep(MonitorNowNs()));
  ASSERT_TRUE((*product)->Run(a.data(), m, c.data(), 2).ok());
  EXPECT_FALSE(WorkersMayBeAsleep(MonitorNowNs()));
  EXPECT_EQ(c[0], 0.25f * 0.5f * k);
}

TEST_F(TeamMonitorTest, PausedRangesRunOnTheCallingThread) {
  Stall();
  const int64_t t0 = MonitorNowNs();
  std::vector<std::pair<int64_t, int64_t>> calls;
  bool in_parallel = true;
  ParallelForRange(1000, 1, 2, [&](int64_t begin, int64_t end) {
    calls.push_back({begin, end});
    in_parallel = omp_in_parallel() != 0;
  });
  WithinMs(t0, 40, [&] {
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0].first, 0);
    EXPECT_EQ(calls[0].second, 1000);
    EXPECT_FALSE(in_parallel);
  });
}

TEST_F(TeamMonitorTest, RangesCoverEverythingOnTwoThreads) {
  std::vector<int> hits(1000, 0);
  ParallelForRange(1000, 1, 2, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) ++hits[i];
  });
  for (int h : hits) EXPECT_EQ(h, 1);
}

}  // namespace
}  // namespace attune
