// Peak and idle resident memory with many callers: N threads (default 8) run
// models/mha_tril_runtime at T positions (default 1024) on the oneDNN
// attention path, which materialises a 4·T·T scores buffer per call, then
// stay alive and idle. Prints VmHWM (peak) and VmRSS while they idle, and
// VmRSS after TrimBufferPool. Scratch kept per thread until the thread exited
// made the idle figure grow with the thread count; from the pool it is bounded
// by the pool limit (--limit-mib) and TrimBufferPool returns it.
//
//   scratch_rss [--threads N] [--seq T] [--runs R] [--limit-mib M]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "attune/session.h"
#include "core/memory/buffer_pool.h"

namespace {

long StatusKb(const char* field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field, 0) == 0) return std::atol(line.c_str() + std::strlen(field) + 1);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = 8, seq = 1024, runs = 3;
  long limit_mib = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--threads") threads = std::atoi(argv[i + 1]);
    else if (flag == "--seq") seq = std::atoi(argv[i + 1]);
    else if (flag == "--runs") runs = std::atoi(argv[i + 1]);
    else if (flag == "--limit-mib") limit_mib = std::atol(argv[i + 1]);
    else { std::fprintf(stderr, "unknown flag %s\n", argv[i]); return 2; }
  }
  if (limit_mib >= 0) attune::SetBufferPoolLimit(limit_mib << 20);
  attune::SessionOptions options;
  options.threads = 1;
  options.attention_backend = attune::AttentionBackendOption::kOneDnn;
  auto session = attune::Session::Create(std::string(ATTUNE_SOURCE_DIR) + "/models/mha_tril_runtime/model.onnx", options);
  if (!session.ok()) {
    std::fprintf(stderr, "%s\n", session.status().ToString().c_str());
    return 1;
  }
  std::printf("before: VmRSS %ld KiB\n", StatusKb("VmRSS:"));
  std::vector<float> x(static_cast<size_t>(seq) * 64, 0.5f);
  std::latch done(threads), measured(1);
  std::vector<std::thread> callers;
  int failures = 0;
  for (int t = 0; t < threads; ++t)
    callers.emplace_back([&] {
      auto input = attune::Tensor::Borrow({attune::ElementType::kFloat32, {1, seq, 64}, x.data()});
      for (int r = 0; r < runs; ++r)
        if (!input.ok() || !(*session)->Run({{"x", *input}}).ok()) ++failures;
      done.count_down();
      measured.wait();  // alive and idle, as a server's worker threads are
    });
  done.wait();
  const attune::BufferPoolStats stats = attune::GetBufferPoolStats();
  std::printf("%d callers x %d runs at T=%d: VmHWM %ld KiB, idle VmRSS %ld KiB, pool keeps %lld KiB\n", threads,
              runs, seq, StatusKb("VmHWM:"), StatusKb("VmRSS:"), static_cast<long long>(stats.retained_bytes >> 10));
  attune::TrimBufferPool();
  std::printf("after TrimBufferPool: VmRSS %ld KiB\n", StatusKb("VmRSS:"));
  measured.count_down();
  for (std::thread& t : callers) t.join();
  return failures == 0 ? 0 : 1;
}
