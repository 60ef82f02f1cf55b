// Whether the threads of a run can count on their cores right now. A
// fork-join region waits for its slowest thread: when another process keeps a
// core busy, a worker the scheduler does not run for a time slice (a few
// milliseconds) stalls every region it takes part in, and a decode step of 60
// regions then takes ten times as long as on one thread. Regions report how
// late their workers started; two late starts within 50 ms (a stall) make
// every run use the calling thread alone for a while, after which threads
// are tried again, the pause doubling with every stall until ten seconds pass
// without one. One late start alone is not a stall: the host of a virtual
// machine preempts a virtual CPU now and then (about one region in several
// hundred on the Zen 5 host measured), and pausing for it cost two-thread
// generation most of its second thread. The state is
// process-wide: the cores are shared by all sessions of a process alike.
//
// A region forked after the team sat idle for a while is not judged: OpenMP
// workers spin a few milliseconds after a region, then sleep, and waking a
// sleeping worker on a virtual machine took over a millisecond on the hosts
// measured (the first region of each decode step), which says nothing about
// a busy core; the regions that follow within the step do.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

namespace attune {

/// Threads to use now for a request of `threads` (1 while workers start late).
int EffectiveThreads(int threads);

/// Reports the delay between a region's fork and its latest worker's start
/// (a late one: a stall when another late one came within 50 ms).
void ReportWorkerStartLag(int64_t lag_ns);

/// Whether a region forked at `fork_ns` may have found its workers asleep:
/// no region ended within kWorkerSleepGapNs before it.
bool WorkersMayBeAsleep(int64_t fork_ns);

/// Records that a region ended at `end_ns` (its workers then spin a while).
void NoteRegionEnd(int64_t end_ns);

/// Steady-clock nanoseconds, the monitor's time base.
int64_t MonitorNowNs();

/// Raises `a` to `value` if it is below it.
inline void RaiseTo(std::atomic<int64_t>& a, int64_t value) {
  int64_t seen = a.load(std::memory_order_relaxed);
  while (value > seen && !a.compare_exchange_weak(seen, value, std::memory_order_relaxed)) {
  }
}

/// Measures one parallel region: made before the fork, Arrive() called first
/// thing by every worker in it, and the lag reported when it goes out of scope.
class WorkerStartProbe {
 public:
  WorkerStartProbe() : fork_ns_(MonitorNowNs()), latest_ns_(fork_ns_) {}
  ~WorkerStartProbe() {
    if (!WorkersMayBeAsleep(fork_ns_)) ReportWorkerStartLag(Lag());
    NoteRegionEnd(MonitorNowNs());
  }
  WorkerStartProbe(const WorkerStartProbe&) = delete;
  WorkerStartProbe& operator=(const WorkerStartProbe&) = delete;

  void Arrive() { RaiseTo(latest_ns_, MonitorNowNs()); }
  /// Counts a worker's wait for its core since its previous probe as lag too
  /// (RunQueueWaitSinceLastProbeNs).
  void Waited(int64_t wait_ns) { RaiseTo(waited_ns_, wait_ns); }

 private:
  int64_t Lag() const {
    return std::max(latest_ns_.load(std::memory_order_relaxed) - fork_ns_, waited_ns_.load(std::memory_order_relaxed));
  }

  int64_t fork_ns_;
  std::atomic<int64_t> latest_ns_;
  std::atomic<int64_t> waited_ns_{0};
};

/// How long the calling thread was runnable but waiting for a core since it
/// last asked (the kernel's schedstat run delay; 0 on the first call and
/// where the kernel does not report it). A fork measures only whether a
/// worker starts late; a worker that another process keeps off its core in
/// the middle of a long region (a oneDNN product of milliseconds) starts on
/// time and still stalls the region. GPT-2's prefill on two threads with a
/// busy core showed 12 late starts in 293 regions while every run took 1.5×
/// the time of one thread.
int64_t RunQueueWaitSinceLastProbeNs();

/// Worker start delay above which a region counts as stalled: a sleeping
/// worker wakes in tens of microseconds, a descheduled one in milliseconds.
inline constexpr int64_t kLateWorkerStartNs = 250'000;

/// Idle time after which a team's workers may be asleep: libgomp spins
/// 300 000 iterations by default (6 ms on a Zen 5 core) before it sleeps.
inline constexpr int64_t kWorkerSleepGapNs = 2'000'000;

/// Once per process, before its first run on more than one thread: whether
/// a team of `threads` (0: OpenMP's default) finds its cores free. Every
/// thread spins kCoreProbeNs and reads how long it waited for its core; a
/// wait above kCoreProbeWaitNs on any (another process holds a core) starts
/// the process on one thread for kContendedStartNs, as a stall does, so a
/// short process on a busy machine does not pay its first stalls before
/// the monitor learns (six LLaMA decode steps took 50 ms each on two threads
/// against 35 on one). A machine that quiets down gets its threads back when
/// that pause ends. Returns whether the cores were found contended.
bool ProbeCoresOnce(int threads);
/// The measurement itself, on a team of `threads`: whether one of them
/// waited more than kCoreProbeWaitNs for its core while spinning kCoreProbeNs.
bool CoresContended(int threads);
inline constexpr int64_t kCoreProbeNs = 20'000'000;
inline constexpr int64_t kCoreProbeWaitNs = 2'000'000;
inline constexpr int64_t kContendedStartNs = 1'000'000'000;

/// Stalls reported since the process started (each began a one-thread pause).
int64_t TeamStallCount();

/// Forgets any stall seen (tests).
void ResetTeamMonitor();

}  // namespace attune
