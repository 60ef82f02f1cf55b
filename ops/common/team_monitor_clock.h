// The team monitor's time base, replaceable: its decisions (a stall, a pause
// and its end, a team that may be asleep) depend only on the times it is
// given, so a test steps a clock of its own instead of sleeping and hoping a
// busy machine keeps up.
#pragma once

#include <cstdint>

namespace attune {

using MonitorClock = int64_t (*)();

/// Makes MonitorNowNs() return `now()` (nullptr: the steady clock again).
/// Set it only while no run is in flight.
void SetMonitorClock(MonitorClock now);

}  // namespace attune
