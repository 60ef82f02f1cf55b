#include "server/generation_engine.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace attune::server {

JobUpdate GenerationJob::WaitFor(size_t seen) {
  std::unique_lock<std::mutex> lock(mutex);
  changed.wait(lock, [&] { return done || tokens.size() > seen; });
  const size_t from = std::min(seen, tokens.size());
  JobUpdate update;
  update.tokens.assign(tokens.begin() + from, tokens.end());
  update.text.assign(text.begin() + from, text.end());
  update.done = done;
  return update;
}

std::string GenerationJob::FullText() {
  std::lock_guard<std::mutex> lock(mutex);
  std::string all;
  for (const std::string& piece : text) all += piece;
  return all + text_rest;
}

absl::StatusOr<std::unique_ptr<GenerationEngine>> GenerationEngine::Create(const Session& session,
                                                                           std::string model_name, int max_batch,
                                                                           int max_queue, Metrics& metrics) {
  auto batch = DecodeBatch::Create(session);
  if (!batch.ok()) return batch.status();
  std::unique_ptr<GenerationEngine> engine(new GenerationEngine());
  engine->batch_ = *std::move(batch);
  engine->model_name_ = std::move(model_name);
  engine->max_batch_ = std::max(1, max_batch);
  engine->max_queue_ = std::max(0, max_queue);
  engine->metrics_ = &metrics;
  engine->thread_ = std::thread([e = engine.get()] { e->Loop(); });
  return engine;
}

GenerationEngine::~GenerationEngine() { Stop(); }

int64_t GenerationEngine::vocab_size() const { return batch_->signature().vocab_size; }

absl::Status GenerationEngine::Submit(std::shared_ptr<GenerationJob> job) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return absl::UnavailableError("the server is shutting down");
    if (static_cast<int>(pending_.size()) >= max_queue_) {
      ++metrics_->rejected_full;
      return absl::UnavailableError("the generation queue is full; retry later");
    }
    pending_.push_back(std::move(job));
  }
  wake_.notify_one();
  return absl::OkStatus();
}

void GenerationEngine::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void GenerationEngine::Finish(int64_t id, const std::string& reason, absl::Status status) {
  auto it = std::find_if(active_.begin(), active_.end(), [&](const auto& a) { return a.first == id; });
  if (it == active_.end()) return;
  GenerationJob& job = *it->second;
  const std::string rest = job.text_out ? job.text_out->Finish() : std::string();
  {
    std::lock_guard<std::mutex> lock(job.mutex);
    job.done = true;
    job.finish_reason = reason;
    job.status = std::move(status);
    job.text_rest = rest;
  }
  job.changed.notify_all();
  batch_->Remove(id);
  active_.erase(it);
}

bool GenerationEngine::Deliver(int64_t id, int64_t token) {
  auto it = std::find_if(active_.begin(), active_.end(), [&](const auto& a) { return a.first == id; });
  if (it == active_.end()) return true;
  GenerationJob& job = *it->second;
  std::string piece;
  if (job.text_out) {
    auto text = job.text_out->Push(token);
    if (!text.ok()) {
      Finish(id, "error", text.status());
      return true;
    }
    piece = *std::move(text);
  }
  size_t count;
  {
    std::lock_guard<std::mutex> lock(job.mutex);
    job.tokens.push_back(token);
    job.text.push_back(std::move(piece));
    count = job.tokens.size();
  }
  job.changed.notify_all();
  const auto& stop_ids = job.options.stop_ids;
  if (token == job.options.eos_id || std::find(stop_ids.begin(), stop_ids.end(), token) != stop_ids.end()) {
    Finish(id, "eos_token");
    return true;
  }
  if (job.text_out && job.text_out->stopped()) {
    Finish(id, "stop");
    return true;
  }
  if (static_cast<int64_t>(count) >= job.options.max_new_tokens) {
    Finish(id, "length");
    return true;
  }
  return false;
}

void GenerationEngine::Admit(std::vector<std::shared_ptr<GenerationJob>> jobs) {
  // The prompts of the jobs joining at this step run together (one prefill
  // for all of them rather than one each, every stream waiting meanwhile).
  std::vector<DecodeBatch::Joining> joining;
  for (auto& job : jobs) {
    const int64_t id = next_id_++;
    active_.emplace_back(id, job);
    if (job->cancelled) {
      Finish(id, "cancelled");
      continue;
    }
    joining.push_back({id, &job->prompt, &job->options});
  }
  if (joining.empty()) return;
  const std::vector<absl::StatusOr<int64_t>> firsts = batch_->AddAll(joining);
  for (size_t j = 0; j < joining.size(); ++j) {
    if (!firsts[j].ok()) {
      Finish(joining[j].id, "error", firsts[j].status());
      continue;
    }
    metrics_->RecordTokens(model_name_, 1, 0);
    Deliver(joining[j].id, *firsts[j]);
  }
}

void GenerationEngine::Loop() {
  for (;;) {
    std::vector<std::shared_ptr<GenerationJob>> joining;
    bool stopping;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !pending_.empty() || !active_.empty(); });
      while (!pending_.empty() && static_cast<int>(active_.size() + joining.size()) < max_batch_) {
        joining.push_back(std::move(pending_.front()));
        pending_.pop_front();
      }
      stopping = stopping_;
      if (stopping && pending_.empty() && active_.empty() && joining.empty()) break;
    }
    Admit(std::move(joining));
    // Jobs whose reader left or whose time is up leave before the step.
    const auto now = std::chrono::steady_clock::now();
    std::vector<std::pair<int64_t, std::string>> leaving;
    for (const auto& [id, job] : active_) {
      if (job->cancelled) leaving.emplace_back(id, "cancelled");
      else if (now > job->deadline) leaving.emplace_back(id, "timeout");
    }
    for (const auto& [id, reason] : leaving) Finish(id, reason);
    metrics_->SetGenerationBatch(model_name_, static_cast<int64_t>(active_.size()));
    if (active_.empty()) continue;
    const auto start = std::chrono::steady_clock::now();
    auto tokens = batch_->Step();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!tokens.ok()) {
      std::vector<int64_t> ids;
      for (const auto& a : active_) ids.push_back(a.first);
      for (int64_t id : ids) Finish(id, "error", tokens.status());
      continue;
    }
    metrics_->RecordTokens(model_name_, static_cast<int64_t>(tokens->size()),
                           seconds > 0 ? static_cast<double>(tokens->size()) / seconds : 0);
    for (const auto& [id, token] : *tokens) Deliver(id, token);
  }
}

}  // namespace attune::server
