// attune serve: an inference server speaking the Open Inference Protocol
// (KServe v2) over HTTP/REST and gRPC, with Triton's generate extension and
// OpenAI-style completions for decoder models (continuous batching).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "attune/session.h"

namespace attune::server {

struct ServerOptions {
  std::vector<std::string> model_paths;  // .onnx files or folders (see FindModelSources)
  std::string model_name;                // with one model: the name to serve it under
  std::string host = "127.0.0.1";
  int port = 8080;
  int grpc_port = 8081;  // inference.GRPCInferenceService; 0: no gRPC
  SessionOptions session;    // how each model loads and runs (threads per run, fusion, ...)
  int max_concurrency = 0;   // inference runs at once (0 = the cores)
  int max_queue = 64;        // requests waiting for a run; more get 503
  int max_batch = 16;        // sequences in one model's decode batch
  int64_t max_request_bytes = int64_t{64} << 20;
  int64_t max_tensor_bytes = int64_t{256} << 20;
  double request_timeout_s = 60;  // queue wait and generation time per request
  std::string access_log = "-";   // "-" = stderr, "" = none, else a file appended to
};

/// Loads the models, serves until SIGTERM or SIGINT, drains in-flight
/// requests and returns OK. Errors: a model that does not load, a port that
/// cannot be bound.
absl::Status RunServer(const ServerOptions& options);

}  // namespace attune::server
