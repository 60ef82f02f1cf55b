// Server metrics in Prometheus' text exposition format: request counts,
// errors and latency histograms per model and endpoint, queue depth, tokens.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace attune::server {

class Metrics {
 public:
  /// One finished request: its model ("" for server endpoints), endpoint name, status and duration.
  void RecordRequest(const std::string& model, const std::string& endpoint, int status, double seconds);
  /// Tokens produced by generation on a model, and the step's decode rate.
  void RecordTokens(const std::string& model, int64_t tokens, double tokens_per_second);
  void SetGenerationBatch(const std::string& model, int64_t sequences);

  std::atomic<int64_t> queue_depth{0};      // requests waiting for an inference slot
  std::atomic<int64_t> in_flight{0};        // requests running
  std::atomic<int64_t> rejected_full{0};    // 503s for a full queue

  /// The exposition text.
  std::string Render() const;

  static constexpr std::array<double, 14> kBuckets{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                                                   0.25,  0.5,    1,     2.5,  5,     10,   30};

 private:
  struct Series {
    int64_t requests = 0;
    int64_t errors = 0;
    std::array<int64_t, kBuckets.size()> buckets{};
    double sum = 0;
  };
  struct Generation {
    int64_t tokens = 0;
    double tokens_per_second = 0;
    int64_t batch = 0;
  };
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Series> series_;  // (model, endpoint)
  std::map<std::string, Generation> generation_;
};

}  // namespace attune::server
