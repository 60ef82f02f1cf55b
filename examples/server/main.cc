// A model server in miniature: loads a model once, then worker threads share the
// one Session and answer requests concurrently.
//
//   server MODEL.onnx REQUESTS_DIR RESPONSES_DIR [WORKERS]
//
// A request is a folder REQUESTS_DIR/<id>/ holding <input name>.npy for every
// model input (or a file REQUESTS_DIR/<id>.npy when the model has one input);
// the response is RESPONSES_DIR/<id>/<output name>.npy for every output.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "attune/attune.h"
#include "npy_file.h"

namespace fs = std::filesystem;

namespace {

struct Request {
  std::string id;
  fs::path path;  // a folder, or one .npy file
};

std::vector<Request> ListRequests(const fs::path& dir) {
  std::vector<Request> requests;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.is_directory()) requests.push_back({entry.path().filename().string(), entry.path()});
    else if (entry.path().extension() == ".npy") requests.push_back({entry.path().stem().string(), entry.path()});
  }
  std::sort(requests.begin(), requests.end(), [](const Request& a, const Request& b) { return a.id < b.id; });
  return requests;
}

absl::StatusOr<attune::NamedTensors> LoadInputs(const attune::Session& session, const Request& request) {
  attune::NamedTensors inputs;
  for (const attune::TensorInfo& info : session.inputs()) {
    const fs::path file = fs::is_directory(request.path) ? request.path / (info.name + ".npy") : request.path;
    auto tensor = server::ReadNpy(file.string());
    if (!tensor.ok()) return tensor.status();
    inputs.emplace_back(info.name, *std::move(tensor));
  }
  return inputs;
}

absl::Status Serve(const attune::Session& session, const Request& request, const fs::path& responses) {
  auto inputs = LoadInputs(session, request);
  if (!inputs.ok()) return inputs.status();
  // Run is const and thread-safe: every worker calls it on the same Session.
  auto outputs = session.Run(*inputs);
  if (!outputs.ok()) return outputs.status();
  const fs::path folder = responses / request.id;
  fs::create_directories(folder);
  for (const auto& [name, tensor] : *outputs) {
    absl::Status written = server::WriteNpy((folder / (name + ".npy")).string(), tensor);
    if (!written.ok()) return written;
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: server MODEL.onnx REQUESTS_DIR RESPONSES_DIR [WORKERS]\n");
    return 2;
  }
  const int workers = argc == 5 ? std::max(1, std::atoi(argv[4])) : 4;

  // Each Run uses a team of OpenMP threads. Workers × threads should not
  // exceed the cores: a team waits for its slowest thread, so oversubscribed
  // teams stall (Attune then drops to one thread per run for a while, see
  // docs/embedding.md, "Threading"). With as many workers as cores, one thread per
  // run; with fewer workers, the cores shared out between them.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  attune::SessionOptions options;
  options.threads = std::max(1, cores / workers);
  auto session = attune::Session::Create(argv[1], options);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;
  if (!fs::is_directory(argv[2])) return std::fprintf(stderr, "%s is not a folder\n", argv[2]), 1;
  const std::vector<Request> requests = ListRequests(argv[2]);
  const fs::path responses = argv[3];
  fs::create_directories(responses);

  std::atomic<size_t> next{0};
  std::atomic<int> failed{0};
  std::mutex print;
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) {
    pool.emplace_back([&, w] {
      for (size_t i = next++; i < requests.size(); i = next++) {
        const auto t0 = std::chrono::steady_clock::now();
        const absl::Status status = Serve(**session, requests[i], responses);
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::lock_guard<std::mutex> lock(print);
        if (status.ok()) {
          std::printf("%s: done in %.2f ms by worker %d\n", requests[i].id.c_str(), ms, w);
        } else {
          ++failed;
          std::fprintf(stderr, "%s: %s\n", requests[i].id.c_str(), status.ToString().c_str());
        }
      }
    });
  }
  for (std::thread& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("served %zu requests (%d failed) with %d workers in %.3f s\n", requests.size(), failed.load(), workers,
              seconds);
  return failed == 0 ? 0 : 1;
}
