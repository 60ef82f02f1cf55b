#include "ops/common/team_monitor.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <cstdlib>

#include "ops/common/team_monitor_clock.h"

namespace attune {
namespace {

// One-thread pause after the first stall, and the longest it doubles to:
// short enough that a machine that quiets down gets its threads back within
// a second or two, long enough that probing costs a small share of the runs.
constexpr int64_t kFirstPauseNs = 50'000'000;
constexpr int64_t kLongestPauseNs = 2'000'000'000;
// Stall-free time after which the pause starts short again. One on-time
// region proves little: with a core busy, most regions still start on time
// between the scheduler's slices, and a short pause would keep probing.
constexpr int64_t kQuietResetNs = 10'000'000'000;
// A late start pauses the threads only when another came within this time
// before it: a busy core delays region after region (every one that meets
// the other process's time slice), where a virtual machine's host that
// preempts a virtual CPU now and then delays one region in hundreds.
constexpr int64_t kLatePairNs = 50'000'000;

std::atomic<int64_t> solo_until_ns{0};
std::atomic<int64_t> pause_ns{kFirstPauseNs};
std::atomic<int64_t> last_stall_ns{0};
std::atomic<int64_t> stalls{0};
std::atomic<int64_t> last_region_end_ns{0};
std::atomic<int64_t> last_late_ns{-kLatePairNs - 1};
std::atomic<MonitorClock> clock_override{nullptr};

}  // namespace

void SetMonitorClock(MonitorClock now) { clock_override.store(now, std::memory_order_relaxed); }

int64_t MonitorNowNs() {
  if (const MonitorClock now = clock_override.load(std::memory_order_relaxed)) return now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int EffectiveThreads(int threads) {
  if (threads <= 1) return threads;
  return MonitorNowNs() < solo_until_ns.load(std::memory_order_relaxed) ? 1 : threads;
}

void ReportWorkerStartLag(int64_t lag_ns) {
  const int64_t now = MonitorNowNs();
  if (lag_ns <= kLateWorkerStartNs) {
    if (now - last_stall_ns.load(std::memory_order_relaxed) > kQuietResetNs)
      pause_ns.store(kFirstPauseNs, std::memory_order_relaxed);
    return;
  }
  const int64_t previous_late = last_late_ns.exchange(now, std::memory_order_relaxed);
  if (now - previous_late > kLatePairNs) return;  // one late start alone: not yet a busy core
  stalls.fetch_add(1, std::memory_order_relaxed);
  last_stall_ns.store(now, std::memory_order_relaxed);
  const int64_t pause = pause_ns.load(std::memory_order_relaxed);
  solo_until_ns.store(now + pause, std::memory_order_relaxed);
  pause_ns.store(std::min(2 * pause, kLongestPauseNs), std::memory_order_relaxed);
}

bool CoresContended(int threads) {
  std::atomic<int64_t> longest_wait{0};
#pragma omp parallel num_threads(threads)
  {
    RunQueueWaitSinceLastProbeNs();  // the baseline
    const int64_t until = MonitorNowNs() + kCoreProbeNs;
    while (MonitorNowNs() < until) {
    }
    RaiseTo(longest_wait, RunQueueWaitSinceLastProbeNs());
  }
  NoteRegionEnd(MonitorNowNs());
  return longest_wait.load() > kCoreProbeWaitNs;
}

bool ProbeCoresOnce(int threads) {
  static std::once_flag once;
  static bool contended = false;
  std::call_once(once, [&] {
    const int team = threads > 0 ? threads : omp_get_max_threads();
    if (team <= 1 || !CoresContended(team)) return;
    contended = true;
    const int64_t now = MonitorNowNs();
    stalls.fetch_add(1, std::memory_order_relaxed);
    last_stall_ns.store(now, std::memory_order_relaxed);
    solo_until_ns.store(now + kContendedStartNs, std::memory_order_relaxed);
    pause_ns.store(std::min(2 * kContendedStartNs, kLongestPauseNs), std::memory_order_relaxed);
  });
  return contended;
}

int64_t RunQueueWaitSinceLastProbeNs() {
  // The thread's own schedstat file, opened once: "<on cpu ns> <waiting ns> <slices>".
  thread_local const int fd = ::open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC);
  thread_local int64_t last_wait_ns = -1;
  if (fd < 0) return 0;
  char text[96];
  const ssize_t n = ::pread(fd, text, sizeof(text) - 1, 0);
  if (n <= 0) return 0;
  text[n] = '\0';
  char* end = nullptr;
  std::strtoll(text, &end, 10);  // time on a core
  if (end == text) return 0;     // not the three numbers expected
  const int64_t wait_ns = std::strtoll(end, nullptr, 10);
  const int64_t since = last_wait_ns < 0 ? 0 : wait_ns - last_wait_ns;
  last_wait_ns = wait_ns;
  return std::max<int64_t>(since, 0);
}

bool WorkersMayBeAsleep(int64_t fork_ns) {
  return fork_ns - last_region_end_ns.load(std::memory_order_relaxed) > kWorkerSleepGapNs;
}

void NoteRegionEnd(int64_t end_ns) { RaiseTo(last_region_end_ns, end_ns); }

int64_t TeamStallCount() { return stalls.load(std::memory_order_relaxed); }

void ResetTeamMonitor() {
  solo_until_ns.store(0, std::memory_order_relaxed);
  last_stall_ns.store(0, std::memory_order_relaxed);
  pause_ns.store(kFirstPauseNs, std::memory_order_relaxed);
  last_region_end_ns.store(0, std::memory_order_relaxed);
  last_late_ns.store(-kLatePairNs - 1, std::memory_order_relaxed);
}

}  // namespace attune
