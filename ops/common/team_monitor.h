// Whether the threads of a run can count on their cores right now. A
// fork-join region waits for its slowest thread: when another process keeps a
// core busy, a worker the scheduler does not run for a time slice (a few
// milliseconds) stalls every region it takes part in, and a decode step of 60
// regions then takes ten times as long as on one thread. Regions report how
// late their workers started; a late start makes every run use the calling
// thread alone for a while, after which threads are tried again, the pause
// doubling while the lateness persists. The state is process-wide: the
// cores are shared by all sessions of a process alike.
#pragma once

#include <cstdint>

namespace attune {

/// Threads to use now for a request of `threads` (1 while workers start late).
int EffectiveThreads(int threads);

/// Reports the delay between a region's fork and its latest worker's start.
void ReportWorkerStartLag(int64_t lag_ns);

/// Worker start delay above which a region counts as stalled: a sleeping
/// worker wakes in tens of microseconds, a descheduled one in milliseconds.
inline constexpr int64_t kLateWorkerStartNs = 250'000;

/// Steady-clock nanoseconds, the monitor's time base.
int64_t MonitorNowNs();

/// Forgets any stall seen (tests).
void ResetTeamMonitor();

}  // namespace attune
