// What the endpoints share: the options, the loaded models, metrics and the queue.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "server/admission.h"
#include "server/infer_codec.h"
#include "server/metrics.h"
#include "server/model_repository.h"
#include "server/server.h"

namespace httplib {
struct Request;
struct Response;
class Server;
}  // namespace httplib

namespace attune::server {

// What the server says of itself (REST's GET /v2 and gRPC's ServerMetadata).
inline constexpr char kServerName[] = "attune";
inline constexpr char kServerVersion[] = "0.1.0";
inline constexpr const char* kServerExtensions[] = {"binary_tensor_data", "generate", "model_repository_index"};
inline constexpr char kPlatform[] = "onnx_onnxv1";

struct ServerContext {
  explicit ServerContext(const ServerOptions& o, int slots)
      : options(o), admission(slots, o.max_queue, metrics) {}
  ServerOptions options;
  Metrics metrics;
  Admission admission;
  CodecLimits limits;
  std::vector<std::unique_ptr<ServedModel>> models;  // filled before `ready`
  std::atomic<bool> ready{false};
  std::atomic<bool> stopping{false};
  /// Writes one access-log line for a call that is not HTTP (gRPC): model,
  /// endpoint, status code, seconds. Empty when the log is off.
  std::function<void(const std::string&, const std::string&, int, double)> log_access;

  /// The model of that name (and version, when given): NotFound otherwise,
  /// Unavailable while the models load.
  absl::StatusOr<ServedModel*> Find(const std::string& name, const std::string& version = "");
  std::chrono::steady_clock::time_point Deadline(int64_t timeout_ms = 0) const;
};

/// Which model and endpoint a request was for, for the access log and the
/// metrics (set by the handler on its thread, read when the response is logged).
void TagRequest(const std::string& model, const std::string& endpoint);

/// The HTTP status of an error (400 bad request, 404 unknown model, 503 busy, 500 internal).
int HttpStatus(const absl::Status& status);

/// An error response: the protocol's {"error": message} with the status the
/// code maps to (400 bad request, 404 unknown model, 503 + Retry-After busy,
/// 500 internal).
void SendError(httplib::Response& res, const absl::Status& status);
void SendJson(httplib::Response& res, const std::string& body, int status = 200);

/// Registers the endpoints on `http`.
void InstallRestRoutes(httplib::Server& http, ServerContext& ctx);
void InstallGenerateRoutes(httplib::Server& http, ServerContext& ctx);

}  // namespace attune::server
