// Continuous batching for one model: a thread that runs every generation in
// flight on the model as one decode batch (attune::DecodeBatch). Requests
// join at the next step and leave when they end; each sees its tokens as
// they come through its GenerationJob.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/decode_batch.h"
#include "attune/generated_text.h"
#include "attune/generator.h"
#include "attune/session.h"
#include "server/metrics.h"

namespace attune::server {

/// What a reader sees of a job: the tokens (and their text) after those it
/// has seen, and whether the job is done.
struct JobUpdate {
  std::vector<int64_t> tokens;
  std::vector<std::string> text;  // per token, its piece of text ("" without a tokenizer)
  bool done = false;
};

/// One generation: what to run, and its tokens as they come.
struct GenerationJob {
  std::vector<int64_t> prompt;
  GenerationOptions options;  // sampling, max_new_tokens, eos_id and stop_ids
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  /// The text of the tokens, cut at stop strings: set for a model with a
  /// tokenizer, used by the engine thread only.
  std::unique_ptr<GeneratedText> text_out;

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<int64_t> tokens;     // produced so far (up to the one completing a stop string)
  std::vector<std::string> text;   // per token, the text it made safe to show
  std::string text_rest;           // text held back until the end (set when done)
  bool done = false;
  std::string finish_reason;    // "length", "eos_token", "stop" (a stop string), "timeout", "cancelled", "error"
  absl::Status status;          // an error that ended it
  std::atomic<bool> cancelled{false};  // set by the reader (client gone)

  /// Waits until more than `seen` tokens exist or the job is done.
  JobUpdate WaitFor(size_t seen);
  /// All the text (after the job is done).
  std::string FullText();
};

class GenerationEngine {
 public:
  /// InvalidArgument when the session is not a decoder the batch can run.
  static absl::StatusOr<std::unique_ptr<GenerationEngine>> Create(const Session& session, std::string model_name,
                                                                  int max_batch, int max_queue, Metrics& metrics);
  ~GenerationEngine();

  /// Queues a job; Unavailable when the queue is full or the engine stops.
  absl::Status Submit(std::shared_ptr<GenerationJob> job);
  /// Finishes every job in flight and queued, refuses new ones, joins the thread.
  void Stop();
  int64_t vocab_size() const;

 private:
  GenerationEngine() = default;
  void Loop();
  void Admit(std::vector<std::shared_ptr<GenerationJob>> jobs);
  void Finish(int64_t id, const std::string& reason, absl::Status status = absl::OkStatus());
  // Appends a token; true when the job ends with it.
  bool Deliver(int64_t id, int64_t token);

  std::unique_ptr<DecodeBatch> batch_;
  std::string model_name_;
  int max_batch_ = 8, max_queue_ = 64;
  Metrics* metrics_ = nullptr;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::shared_ptr<GenerationJob>> pending_;
  bool stopping_ = false;
  std::vector<std::pair<int64_t, std::shared_ptr<GenerationJob>>> active_;  // engine thread only
  int64_t next_id_ = 0;
  std::thread thread_;
};

}  // namespace attune::server
