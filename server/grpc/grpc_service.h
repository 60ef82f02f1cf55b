// The Open Inference Protocol over gRPC: inference.GRPCInferenceService on
// its own port, beside the REST endpoints, with the same models, admission
// queue, limits and metrics.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace attune::server {

struct ServerContext;

class GrpcServer {
 public:
  /// Listens on host:port with a bounded pool of `max_threads` handler
  /// threads. Unavailable when the port cannot be bound.
  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(ServerContext& ctx, const std::string& host, int port,
                                                           int max_threads);
  ~GrpcServer();
  /// Stops accepting calls and waits for those in flight (up to the request timeout).
  void Shutdown();

 private:
  struct State;
  explicit GrpcServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace attune::server
