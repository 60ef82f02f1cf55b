#include "server/admission.h"

namespace attune::server {

absl::Status Admission::Enter(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (running_ < slots_) {
    ++running_;
    metrics_.in_flight = running_;
    return absl::OkStatus();
  }
  if (waiting_ >= queue_) {
    ++metrics_.rejected_full;
    return absl::UnavailableError("the server's queue is full; retry later");
  }
  ++waiting_;
  metrics_.queue_depth = waiting_;
  const bool got = freed_.wait_until(lock, deadline, [&] { return running_ < slots_; });
  --waiting_;
  metrics_.queue_depth = waiting_;
  if (!got) return absl::DeadlineExceededError("the request timed out waiting in the queue");
  ++running_;
  metrics_.in_flight = running_;
  return absl::OkStatus();
}

void Admission::Leave() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --running_;
    metrics_.in_flight = running_;
  }
  freed_.notify_one();
}

}  // namespace attune::server
