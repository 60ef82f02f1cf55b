// attune serve's frame: load the models, listen, log, stop on a signal.
#include "server/server.h"

#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <thread>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "attune/session.h"
#include "attune/tokenizer.h"
#include "nlohmann/json.hpp"
#include "server/generation_engine.h"
#include "server/grpc/grpc_service.h"
#include "server/server_context.h"

namespace attune::server {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct RequestTagState {
  std::string model, endpoint = "other";
  Clock::time_point start = Clock::now();
};
thread_local RequestTagState tag;

std::string UtcNow() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t t = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[40];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return text;
}

// One JSON line per request, to stderr or a file.
class AccessLog {
 public:
  explicit AccessLog(const std::string& path) {
    if (path == "-") out_ = stderr;
    else if (!path.empty()) out_ = owned_ = std::fopen(path.c_str(), "a");
  }
  ~AccessLog() {
    if (owned_ != nullptr) std::fclose(owned_);
  }
  bool ok(const std::string& path) const { return path.empty() || out_ != nullptr; }
  void Write(const httplib::Request& req, const httplib::Response& res, double ms) {
    if (out_ == nullptr) return;
    WriteLine({{"time", UtcNow()},        {"remote", req.remote_addr}, {"method", req.method},
               {"path", req.path},        {"status", res.status},      {"ms", ms},
               {"model", tag.model},      {"endpoint", tag.endpoint},  {"bytes_in", req.body.size()},
               {"bytes_out", res.body.size()}});
  }
  // A gRPC call: its status is the gRPC code.
  void WriteCall(const std::string& model, const std::string& endpoint, int grpc_code, double ms) {
    if (out_ == nullptr) return;
    WriteLine({{"time", UtcNow()}, {"method", "gRPC"}, {"grpc_status", grpc_code}, {"ms", ms},
               {"model", model}, {"endpoint", endpoint}});
  }
  bool enabled() const { return out_ != nullptr; }

 private:
  void WriteLine(const json& line) {
    const std::string text = line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    std::lock_guard<std::mutex> lock(mutex_);
    std::fwrite(text.data(), 1, text.size(), out_);
    std::fflush(out_);
  }

  std::FILE* out_ = nullptr;
  std::FILE* owned_ = nullptr;
  std::mutex mutex_;
};

// The tokenizer beside a decoder's file, when there is one (null otherwise);
// an error for one that does not load or does not fit the model's logits.
absl::StatusOr<std::unique_ptr<Tokenizer>> LoadTokenizer(const ModelSource& source, int64_t model_vocab) {
  auto path = Tokenizer::FindBeside(source.path);
  if (!path.ok()) return std::unique_ptr<Tokenizer>();
  auto tokenizer = Tokenizer::Load(*path);
  if (!tokenizer.ok())
    return absl::Status(tokenizer.status().code(),
                        absl::StrCat("model '", source.name, "': tokenizer ", *path, ": ", tokenizer.status().message()));
  if (model_vocab > 0 && (*tokenizer)->vocab_size() > model_vocab)
    return absl::InvalidArgumentError(absl::StrCat("model '", source.name, "': the tokenizer ", *path, " has ",
                                                   (*tokenizer)->vocab_size(), " ids, more than the model's logits (",
                                                   model_vocab, "): is it the model's own tokenizer?"));
  return tokenizer;
}

absl::Status LoadModels(ServerContext& ctx) {
  auto sources = FindModelSources(ctx.options.model_paths);
  if (!sources.ok()) return sources.status();
  if (!ctx.options.model_name.empty()) {
    if (sources->size() != 1) return absl::InvalidArgumentError("--model-name needs exactly one model");
    (*sources)[0].name = ctx.options.model_name;
  }
  const SessionOptions& session_options = ctx.options.session;
  for (ModelSource& source : *sources) {
    auto model = std::make_unique<ServedModel>();
    auto session = Session::Create(source.path, session_options);
    if (!session.ok())
      return absl::Status(session.status().code(),
                          absl::StrCat("model '", source.name, "' (", source.path, "): ", session.status().message()));
    model->session = *std::move(session);
    auto engine = GenerationEngine::Create(*model->session, source.name, ctx.options.max_batch,
                                           ctx.options.max_queue, ctx.metrics);
    if (engine.ok()) model->generation = *std::move(engine);
    if (model->generation) {
      auto tokenizer = LoadTokenizer(source, model->generation->vocab_size());
      if (!tokenizer.ok()) return tokenizer.status();
      model->tokenizer = *std::move(tokenizer);
    }
    std::fprintf(stderr, "attune serve: model '%s' version %s loaded from %s%s%s\n", source.name.c_str(),
                 source.version.c_str(), source.path.c_str(),
                 model->generation ? " (decoder: generate, continuous batching)" : "",
                 model->tokenizer ? " with its tokenizer (text in and out)" : "");
    model->source = std::move(source);
    ctx.models.push_back(std::move(model));
  }
  return absl::OkStatus();
}

}  // namespace

int HttpStatus(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kOutOfRange:
    case absl::StatusCode::kFailedPrecondition: return 400;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kDeadlineExceeded: return 503;
    case absl::StatusCode::kUnimplemented: return 501;
    default: return 500;
  }
}

void TagRequest(const std::string& model, const std::string& endpoint) {
  tag.model = model;
  tag.endpoint = endpoint;
}

void SendJson(httplib::Response& res, const std::string& body, int status) {
  res.status = status;
  res.set_content(body, "application/json");
}

void SendError(httplib::Response& res, const absl::Status& status) {
  const int code = HttpStatus(status);
  if (code == 503) res.set_header("Retry-After", "1");
  SendJson(res, json{{"error", std::string(status.message())}}.dump(-1, ' ', false, json::error_handler_t::replace),
           code);
}

absl::StatusOr<ServedModel*> ServerContext::Find(const std::string& name, const std::string& version) {
  if (!ready) return absl::UnavailableError("the models are still loading");
  for (const auto& m : models)
    if (m->source.name == name) {
      if (!version.empty() && version != m->source.version)
        return absl::NotFoundError(absl::StrCat("model '", name, "' has no version '", version, "' (it has '",
                                                m->source.version, "')"));
      return m.get();
    }
  return absl::NotFoundError(absl::StrCat("unknown model '", name, "'"));
}

Clock::time_point ServerContext::Deadline(int64_t timeout_ms) const {
  const double seconds = timeout_ms > 0 ? std::min(timeout_ms / 1000.0, options.request_timeout_s)
                                        : options.request_timeout_s;
  return Clock::now() + std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

absl::Status RunServer(const ServerOptions& options) {
  // Signals are taken by one thread with sigwait; every other thread (the
  // pool's, OpenMP's, the engines') inherits the blocked mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int slots = options.max_concurrency > 0 ? options.max_concurrency : cores;
  ServerContext ctx(options, slots);
  ctx.limits.max_tensor_bytes = options.max_tensor_bytes;
  AccessLog log(options.access_log);
  if (!log.ok(options.access_log))
    return absl::InvalidArgumentError(absl::StrCat("cannot open the access log '", options.access_log, "'"));

  httplib::Server http;
  // A fixed pool: running and queued requests, generation streams and a few
  // for probes and metrics; a connection beyond waits for a free thread.
  const size_t pool = static_cast<size_t>(slots + options.max_queue + options.max_batch + 8);
  http.new_task_queue = [pool] { return new httplib::ThreadPool(pool); };
  http.set_payload_max_length(static_cast<size_t>(options.max_request_bytes));
  http.set_read_timeout(std::chrono::seconds(30));
  http.set_write_timeout(std::chrono::seconds(30));
  http.set_keep_alive_timeout(5);
  http.set_tcp_nodelay(true);  // a response is written in pieces: without it, delayed ACKs add ~40 ms
  http.set_pre_routing_handler([](const httplib::Request&, httplib::Response&) {
    tag = RequestTagState{};
    return httplib::Server::HandlerResponse::Unhandled;
  });
  http.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string message = res.status == 404   ? absl::StrCat("no endpoint ", req.method, " ", req.path)
                                : res.status == 413 ? "the request body exceeds the size limit"
                                                    : absl::StrCat("HTTP ", res.status);
    res.set_content(json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr) {
    SendError(res, absl::InternalError("internal error while handling the request"));
  });
  http.set_logger([&](const httplib::Request& req, const httplib::Response& res) {
    const double seconds = std::chrono::duration<double>(Clock::now() - tag.start).count();
    ctx.metrics.RecordRequest(tag.model, tag.endpoint, res.status, seconds);
    log.Write(req, res, seconds * 1000);
  });
  InstallRestRoutes(http, ctx);
  InstallGenerateRoutes(http, ctx);
  if (log.enabled())
    ctx.log_access = [&log](const std::string& model, const std::string& endpoint, int code, double seconds) {
      log.WriteCall(model, endpoint, code, seconds * 1000);
    };

  if (!http.bind_to_port(options.host, options.port))
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.host, ":", options.port));
  std::unique_ptr<GrpcServer> grpc;
  if (options.grpc_port > 0) {
    // Handler threads as HTTP's pool: running and queued requests plus a few for probes.
    auto started = GrpcServer::Start(ctx, options.host, options.grpc_port, slots + options.max_queue + 8);
    if (!started.ok()) {
      http.stop();
      return started.status();
    }
    grpc = *std::move(started);
  }
  std::thread listener([&] { http.listen_after_bind(); });
  const bool loopback = options.host == "127.0.0.1" || options.host == "localhost" || options.host == "::1";
  std::fprintf(stderr, "attune serve: listening on http://%s:%d%s\n", options.host.c_str(), options.port,
               loopback ? " (loopback only; --host 0.0.0.0 accepts other machines)" : "");
  if (grpc) std::fprintf(stderr, "attune serve: gRPC (inference.GRPCInferenceService) on %s:%d\n",
                         options.host.c_str(), options.grpc_port);

  std::thread waiter([&] {
    int signal_number = 0;
    sigwait(&signals, &signal_number);
    std::fprintf(stderr, "attune serve: signal %d: draining in-flight requests\n", signal_number);
    ctx.stopping = true;
    http.stop();
    if (grpc) grpc->Shutdown();  // waits for the calls in flight
  });
  absl::Status loaded = LoadModels(ctx);
  if (loaded.ok()) {
    ctx.ready = true;
    std::fprintf(stderr, "attune serve: ready (%zu model%s)\n", ctx.models.size(), ctx.models.size() == 1 ? "" : "s");
  } else {
    kill(getpid(), SIGTERM);  // the waiter stops the listener
  }
  listener.join();  // returns when stopped, after the pool has finished its requests
  waiter.join();
  for (auto& m : ctx.models)
    if (m->generation) m->generation->Stop();
  if (loaded.ok()) std::fprintf(stderr, "attune serve: stopped\n");
  return loaded;
}

}  // namespace attune::server
