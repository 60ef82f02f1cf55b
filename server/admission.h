// A bounded queue in front of the models: at most `slots` requests run at
// once, at most `queue` wait for a slot; the next is refused (HTTP 503 with
// Retry-After) instead of waiting without bound.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

#include "absl/status/status.h"
#include "server/metrics.h"

namespace attune::server {

class Admission {
 public:
  Admission(int slots, int queue, Metrics& metrics) : slots_(slots), queue_(queue), metrics_(metrics) {}

  /// Holds a slot from Enter's success until destroyed.
  class Ticket {
   public:
    explicit Ticket(Admission* owner) : owner_(owner) {}
    Ticket(Ticket&& other) noexcept : owner_(other.owner_) { other.owner_ = nullptr; }
    Ticket(const Ticket&) = delete;
    ~Ticket() {
      if (owner_ != nullptr) owner_->Leave();
    }

   private:
    Admission* owner_;
  };

  /// Waits for a slot until `deadline`: Unavailable when the queue is full,
  /// DeadlineExceeded when the wait outlasts the deadline.
  absl::Status Enter(std::chrono::steady_clock::time_point deadline);
  void Leave();

 private:
  std::mutex mutex_;
  std::condition_variable freed_;
  int slots_, queue_;
  int running_ = 0, waiting_ = 0;
  Metrics& metrics_;
};

}  // namespace attune::server
