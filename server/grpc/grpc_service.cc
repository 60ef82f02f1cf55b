#include "server/grpc/grpc_service.h"

#include <grpcpp/grpcpp.h>
#include <grpcpp/resource_quota.h>

#include <chrono>

#include "absl/strings/str_cat.h"
#include "server/datatype.h"
#include "server/grpc/grpc_codec.h"
#include "server/grpc/inference.grpc.pb.h"
#include "server/server_context.h"

namespace attune::server {
namespace {

using Clock = std::chrono::steady_clock;

// absl's status codes are gRPC's, number for number.
grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

void FillTensorMetadata(const TensorInfo& info, inference::ModelMetadataResponse::TensorMetadata& t) {
  t.set_name(info.name);
  t.set_datatype(DatatypeName(info.type));
  if (info.has_shape)
    for (int64_t d : info.shape) t.add_shape(d);
}

class InferenceService final : public inference::GRPCInferenceService::Service {
 public:
  explicit InferenceService(ServerContext& ctx) : ctx_(ctx) {}

  grpc::Status ServerLive(grpc::ServerContext*, const inference::ServerLiveRequest*,
                          inference::ServerLiveResponse* response) override {
    return Done("", "grpc_health_live", [&] {
      response->set_live(true);
      return absl::OkStatus();
    });
  }

  grpc::Status ServerReady(grpc::ServerContext*, const inference::ServerReadyRequest*,
                           inference::ServerReadyResponse* response) override {
    return Done("", "grpc_health_ready", [&] {
      response->set_ready(ctx_.ready && !ctx_.stopping);
      return absl::OkStatus();
    });
  }

  grpc::Status ModelReady(grpc::ServerContext*, const inference::ModelReadyRequest* request,
                          inference::ModelReadyResponse* response) override {
    return Done(request->name(), "grpc_model_ready", [&] {
      auto model = ctx_.Find(request->name(), request->version());
      if (!model.ok() && !absl::IsUnavailable(model.status())) return model.status();
      response->set_ready(model.ok());
      return absl::OkStatus();
    });
  }

  grpc::Status ServerMetadata(grpc::ServerContext*, const inference::ServerMetadataRequest*,
                              inference::ServerMetadataResponse* response) override {
    return Done("", "grpc_server_metadata", [&] {
      response->set_name(kServerName);
      response->set_version(kServerVersion);
      for (const char* e : kServerExtensions) response->add_extensions(e);
      return absl::OkStatus();
    });
  }

  grpc::Status ModelMetadata(grpc::ServerContext*, const inference::ModelMetadataRequest* request,
                             inference::ModelMetadataResponse* response) override {
    return Done(request->name(), "grpc_model_metadata", [&]() -> absl::Status {
      auto model = ctx_.Find(request->name(), request->version());
      if (!model.ok()) return model.status();
      const ServedModel& m = **model;
      response->set_name(m.source.name);
      response->add_versions(m.source.version);
      response->set_platform(kPlatform);
      for (const TensorInfo& i : m.session->inputs()) FillTensorMetadata(i, *response->add_inputs());
      for (const TensorInfo& o : m.session->outputs()) FillTensorMetadata(o, *response->add_outputs());
      return absl::OkStatus();
    });
  }

  grpc::Status ModelInfer(grpc::ServerContext*, const inference::ModelInferRequest* request,
                          inference::ModelInferResponse* response) override {
    return Done(request->model_name(), "grpc_infer", [&]() -> absl::Status {
      auto model = ctx_.Find(request->model_name(), request->model_version());
      if (!model.ok()) return model.status();
      const Session& session = *(*model)->session;
      auto parsed = ParseGrpcInferRequest(*request, session.inputs(), session.outputs(), ctx_.limits);
      if (!parsed.ok()) return parsed.status();
      absl::StatusOr<NamedTensors> outputs;
      {
        if (absl::Status entered = ctx_.admission.Enter(ctx_.Deadline(parsed->timeout_ms)); !entered.ok())
          return entered;
        Admission::Ticket ticket(&ctx_.admission);
        outputs = session.Run(parsed->inputs);
      }
      if (!outputs.ok()) return outputs.status();
      auto chosen = SelectOutputs(*parsed, *outputs);
      if (!chosen.ok()) return chosen.status();
      EncodeGrpcInferResponse(request->model_name(), (*model)->source.version, *parsed, *chosen, *response);
      return absl::OkStatus();
    });
  }

 private:
  // Runs a call's body and records it in the metrics and the access log as REST's are.
  template <typename Body>
  grpc::Status Done(const std::string& model, const char* endpoint, Body body) {
    const auto start = Clock::now();
    const absl::Status status = body();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    ctx_.metrics.RecordRequest(model, endpoint, status.ok() ? 200 : HttpStatus(status), seconds);
    if (ctx_.log_access) ctx_.log_access(model, endpoint, static_cast<int>(status.code()), seconds);
    return ToGrpc(status);
  }

  ServerContext& ctx_;
};

}  // namespace

struct GrpcServer::State {
  std::unique_ptr<InferenceService> service;
  std::unique_ptr<grpc::Server> server;
  double drain_seconds = 60;
};

GrpcServer::GrpcServer(std::unique_ptr<State> state) : state_(std::move(state)) {}

GrpcServer::~GrpcServer() { Shutdown(); }

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(ServerContext& ctx, const std::string& host, int port,
                                                              int max_threads) {
  auto state = std::make_unique<State>();
  state->service = std::make_unique<InferenceService>(ctx);
  state->drain_seconds = ctx.options.request_timeout_s;
  grpc::ServerBuilder builder;
  int bound_port = 0;
  const std::string address = absl::StrCat(host.find(':') != std::string::npos ? "[" + host + "]" : host, ":", port);
  builder.AddListeningPort(address, grpc::InsecureServerCredentials(), &bound_port);
  builder.RegisterService(state->service.get());
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<int64_t>(ctx.options.max_request_bytes, INT32_MAX)));
  // The synchronous server's threads come from this quota: a bounded pool,
  // never a thread per connection.
  grpc::ResourceQuota quota("attune_grpc");
  quota.SetMaxThreads(max_threads);
  builder.SetResourceQuota(quota);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 2);
  state->server = builder.BuildAndStart();
  if (!state->server || bound_port == 0)
    return absl::UnavailableError(absl::StrCat("cannot listen for gRPC on ", address));
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(state)));
}

void GrpcServer::Shutdown() {
  if (!state_->server) return;
  const auto deadline = std::chrono::system_clock::now() +
                        std::chrono::microseconds(static_cast<int64_t>(state_->drain_seconds * 1e6));
  state_->server->Shutdown(deadline);
  state_->server->Wait();
  state_->server.reset();
}

}  // namespace attune::server
