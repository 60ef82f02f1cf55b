#include "server/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace attune::server {
namespace {

// A label value with \, " and newline escaped, as the exposition format requires.
std::string Label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

}  // namespace

void Metrics::RecordRequest(const std::string& model, const std::string& endpoint, int status, double seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Series& s = series_[{model, endpoint}];
  ++s.requests;
  if (status >= 400) ++s.errors;
  for (size_t i = 0; i < kBuckets.size(); ++i)
    if (seconds <= kBuckets[i]) ++s.buckets[i];
  s.sum += seconds;
}

void Metrics::RecordTokens(const std::string& model, int64_t tokens, double tokens_per_second) {
  std::lock_guard<std::mutex> lock(mutex_);
  Generation& g = generation_[model];
  g.tokens += tokens;
  g.tokens_per_second = tokens_per_second;
}

void Metrics::SetGenerationBatch(const std::string& model, int64_t sequences) {
  std::lock_guard<std::mutex> lock(mutex_);
  generation_[model].batch = sequences;
}

std::string Metrics::Render() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string out;
  absl::StrAppend(&out, "# HELP attune_requests_total Requests answered, by model and endpoint.\n",
                  "# TYPE attune_requests_total counter\n");
  for (const auto& [key, s] : series_)
    absl::StrAppend(&out, "attune_requests_total{model=\"", Label(key.first), "\",endpoint=\"", Label(key.second),
                    "\"} ", s.requests, "\n");
  absl::StrAppend(&out, "# HELP attune_request_errors_total Requests answered with an HTTP status of 400 or more.\n",
                  "# TYPE attune_request_errors_total counter\n");
  for (const auto& [key, s] : series_)
    absl::StrAppend(&out, "attune_request_errors_total{model=\"", Label(key.first), "\",endpoint=\"",
                    Label(key.second), "\"} ", s.errors, "\n");
  absl::StrAppend(&out, "# HELP attune_request_duration_seconds Time from request to response.\n",
                  "# TYPE attune_request_duration_seconds histogram\n");
  for (const auto& [key, s] : series_) {
    const std::string labels = absl::StrCat("model=\"", Label(key.first), "\",endpoint=\"", Label(key.second), "\"");
    for (size_t i = 0; i < kBuckets.size(); ++i)
      absl::StrAppend(&out, "attune_request_duration_seconds_bucket{", labels, ",le=\"", kBuckets[i], "\"} ",
                      s.buckets[i], "\n");
    absl::StrAppend(&out, "attune_request_duration_seconds_bucket{", labels, ",le=\"+Inf\"} ", s.requests, "\n");
    absl::StrAppend(&out, "attune_request_duration_seconds_sum{", labels, "} ", absl::StrFormat("%.6f", s.sum), "\n");
    absl::StrAppend(&out, "attune_request_duration_seconds_count{", labels, "} ", s.requests, "\n");
  }
  absl::StrAppend(&out, "# HELP attune_queue_depth Inference requests waiting for a slot.\n",
                  "# TYPE attune_queue_depth gauge\nattune_queue_depth ", queue_depth.load(), "\n");
  absl::StrAppend(&out, "# HELP attune_requests_in_flight Inference requests running.\n",
                  "# TYPE attune_requests_in_flight gauge\nattune_requests_in_flight ", in_flight.load(), "\n");
  absl::StrAppend(&out, "# HELP attune_rejected_total Requests refused with 503 because the queue was full.\n",
                  "# TYPE attune_rejected_total counter\nattune_rejected_total ", rejected_full.load(), "\n");
  absl::StrAppend(&out, "# HELP attune_generated_tokens_total Tokens generated, by model.\n",
                  "# TYPE attune_generated_tokens_total counter\n");
  for (const auto& [model, g] : generation_)
    absl::StrAppend(&out, "attune_generated_tokens_total{model=\"", Label(model), "\"} ", g.tokens, "\n");
  absl::StrAppend(&out, "# HELP attune_generation_tokens_per_second Tokens per second of the last decode step.\n",
                  "# TYPE attune_generation_tokens_per_second gauge\n");
  for (const auto& [model, g] : generation_)
    absl::StrAppend(&out, "attune_generation_tokens_per_second{model=\"", Label(model), "\"} ",
                    absl::StrFormat("%.3f", g.tokens_per_second), "\n");
  absl::StrAppend(&out, "# HELP attune_generation_batch Sequences in the model's decode batch.\n",
                  "# TYPE attune_generation_batch gauge\n");
  for (const auto& [model, g] : generation_)
    absl::StrAppend(&out, "attune_generation_batch{model=\"", Label(model), "\"} ", g.batch, "\n");
  return out;
}

}  // namespace attune::server
