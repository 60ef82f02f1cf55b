// What every oneDNN adapter in ops/ shares: the one CPU engine, the team size
// a primitive is made for, running one, and oneDNN's errors as statuses.
#pragma once

#include <omp.h>

#include <unordered_map>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/memory/pooled_buffer.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "ops/common/team_monitor.h"

namespace attune {

/// The process's oneDNN CPU engine, made on first use and never destroyed
/// (primitives cached in static objects may outlive any other owner).
inline const dnnl::engine& OneDnnCpuEngine() {
  static const dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *engine;
}

/// oneDNN's own parallel sections size their team when a primitive is
/// created, so a primitive is only reused at the team size it was made for.
inline int OneDnnTeamSize() { return omp_in_parallel() ? 1 : omp_get_max_threads(); }

/// An empty region on the calling thread's team, measured for the team
/// monitor like the regions of our own kernels, each thread also reporting
/// how long it waited for its core since its last probe (the product before
/// this one). A primitive's threads report nothing, and a prefill graph is
/// mostly products: a worker that another process keeps off its core stalled
/// product after product unseen (GPT-2's prefill on two threads with a busy
/// core ran at 0.7× the speed of one once its weights were packed, as no
/// region of ours ran inside its products any more). Costs one fork and join
/// and a read of /proc per thread, microseconds against a product's
/// milliseconds.
inline void ProbeTeamBeforeProduct() {
  const int team = OneDnnTeamSize();
  if (team <= 1) return;
  WorkerStartProbe probe;
#pragma omp parallel num_threads(team)
  {
    probe.Arrive();
    probe.Waited(RunQueueWaitSinceLastProbeNs());
  }
}

/// Runs a primitive on the calling thread's team and waits for it. Its
/// OpenMP workers spin a while after it, as after any region, so its end is
/// noted for the team monitor: the regions that follow a product are judged
/// (a prefill graph is mostly products, and its own small regions each came
/// more than the sleep gap after the last region the monitor had seen, so a
/// busy core went unnoticed and two threads ran at half the speed of one).
inline void ExecuteOneDnn(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) {
  ProbeTeamBeforeProduct();
  dnnl::stream stream(OneDnnCpuEngine());
  p.execute(stream, args);
  stream.wait();
  NoteRegionEnd(MonitorNowNs());
}

/// ExecuteOneDnn of a primitive made with the user-managed scratchpad
/// `scratchpad`: the scratch comes from the process-wide pool for this call
/// only, so concurrent executions never share library-owned scratch memory
/// (a grow-only buffer per thread kept its largest size until the thread
/// exited, times every caller thread). Throws oneDNN's out-of-memory error
/// when the pool cannot give it.
inline void ExecuteOneDnnWithScratchpad(const dnnl::primitive& p, const dnnl::memory::desc& scratchpad,
                                        std::unordered_map<int, dnnl::memory>& args) {
  const size_t bytes = scratchpad.get_size();
  PooledBuffer scratch(bytes > 0 ? bytes : 1);
  if (bytes > 0) {
    if (scratch.data() == nullptr) throw dnnl::error(dnnl_out_of_memory, "scratchpad");
    args.emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(scratchpad, OneDnnCpuEngine(), scratch.data()));
  }
  ExecuteOneDnn(p, args);
}

/// A oneDNN exception as a status: out of memory is ResourceExhausted, the rest Internal.
inline absl::Status FromDnnlError(const char* what, const dnnl::error& e) {
  if (e.status == dnnl_out_of_memory)
    return absl::ResourceExhaustedError(absl::StrCat("oneDNN ", what, ": out of memory"));
  return absl::InternalError(absl::StrCat("oneDNN ", what, " failed: ", e.what()));
}

}  // namespace attune
