// The Open Inference Protocol's REST endpoints: health, server and model
// metadata, model readiness, inference; and /metrics.
#include <httplib.h>

#include <charconv>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/datatype.h"
#include "server/server_context.h"

namespace attune::server {
namespace {

using nlohmann::json;

constexpr char kModelPath[] = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";

std::string Match(const httplib::Request& req, size_t i) {
  return i < req.matches.size() ? std::string(req.matches[i]) : std::string();
}

json TensorMetadata(const TensorInfo& info) {
  std::vector<int64_t> shape = info.has_shape ? info.shape : std::vector<int64_t>{};
  json t = {{"name", info.name}, {"datatype", DatatypeName(info.type)}, {"shape", shape}};
  if (!info.has_shape) t["parameters"] = {{"rank_unknown", true}};
  return t;
}

json ModelMetadata(const ServedModel& m) {
  json inputs = json::array(), outputs = json::array();
  for (const TensorInfo& i : m.session->inputs()) inputs.push_back(TensorMetadata(i));
  for (const TensorInfo& o : m.session->outputs()) outputs.push_back(TensorMetadata(o));
  return {{"name", m.source.name},
          {"versions", {m.source.version}},
          {"platform", kPlatform},
          {"inputs", inputs},
          {"outputs", outputs}};
}

absl::StatusOr<std::optional<uint64_t>> HeaderLength(const httplib::Request& req) {
  if (!req.has_header("Inference-Header-Content-Length")) return std::optional<uint64_t>();
  const std::string v = req.get_header_value("Inference-Header-Content-Length");
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("Inference-Header-Content-Length '", v, "' is not a byte count"));
  return std::optional<uint64_t>(n);
}

void Infer(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  const std::string name = Match(req, 1);
  TagRequest(name, "infer");
  auto model = ctx.Find(name, Match(req, 2));
  if (!model.ok()) return SendError(res, model.status());
  auto header_length = HeaderLength(req);
  if (!header_length.ok()) return SendError(res, header_length.status());
  const Session& session = *(*model)->session;
  auto request = ParseInferRequest(req.body, *header_length, session.inputs(), session.outputs(), ctx.limits);
  if (!request.ok()) return SendError(res, request.status());
  absl::StatusOr<NamedTensors> outputs;
  {
    if (absl::Status entered = ctx.admission.Enter(ctx.Deadline(request->timeout_ms)); !entered.ok())
      return SendError(res, entered);
    Admission::Ticket ticket(&ctx.admission);
    outputs = session.Run(request->inputs);
  }
  if (!outputs.ok()) return SendError(res, outputs.status());
  auto chosen = SelectOutputs(*request, *outputs);
  if (!chosen.ok()) return SendError(res, chosen.status());
  EncodedResponse response = EncodeInferResponse(name, (*model)->source.version, *request, *chosen);
  if (response.header_length) {
    res.set_header("Inference-Header-Content-Length", std::to_string(*response.header_length));
    res.set_content(std::move(response.body), "application/octet-stream");
  } else {
    res.set_content(std::move(response.body), "application/json");
  }
}

}  // namespace

void InstallRestRoutes(httplib::Server& http, ServerContext& ctx) {
  http.Get("/v2/health/live", [&](const httplib::Request&, httplib::Response& res) {
    TagRequest("", "health_live");
    SendJson(res, json{{"live", true}}.dump());
  });
  http.Get("/v2/health/ready", [&](const httplib::Request&, httplib::Response& res) {
    TagRequest("", "health_ready");
    const bool ready = ctx.ready && !ctx.stopping;
    SendJson(res, json{{"ready", ready}}.dump(), ready ? 200 : 503);
  });
  http.Get("/v2", [&](const httplib::Request&, httplib::Response& res) {
    TagRequest("", "server_metadata");
    json extensions = json::array();
    for (const char* e : kServerExtensions) extensions.push_back(e);
    SendJson(res, json{{"name", kServerName}, {"version", kServerVersion}, {"extensions", extensions}}.dump());
  });
  http.Get(kModelPath, [&](const httplib::Request& req, httplib::Response& res) {
    TagRequest(Match(req, 1), "model_metadata");
    auto model = ctx.Find(Match(req, 1), Match(req, 2));
    if (!model.ok()) return SendError(res, model.status());
    SendJson(res, ModelMetadata(**model).dump(-1, ' ', false, json::error_handler_t::replace));
  });
  http.Get(std::string(kModelPath) + "/ready", [&](const httplib::Request& req, httplib::Response& res) {
    TagRequest(Match(req, 1), "model_ready");
    auto model = ctx.Find(Match(req, 1), Match(req, 2));
    if (!model.ok() && !absl::IsUnavailable(model.status())) return SendError(res, model.status());
    const bool ready = model.ok();
    SendJson(res, json{{"name", Match(req, 1)}, {"ready", ready}}.dump(-1, ' ', false, json::error_handler_t::replace),
             ready ? 200 : 503);
  });
  http.Post(std::string(kModelPath) + "/infer",
            [&](const httplib::Request& req, httplib::Response& res) { Infer(ctx, req, res); });
  http.Post("/v2/repository/index", [&](const httplib::Request&, httplib::Response& res) {
    TagRequest("", "repository_index");
    json index = json::array();
    if (ctx.ready)
      for (const auto& m : ctx.models)
        index.push_back({{"name", m->source.name}, {"version", m->source.version}, {"state", "READY"}});
    SendJson(res, index.dump(-1, ' ', false, json::error_handler_t::replace));
  });
  http.Get("/metrics", [&](const httplib::Request&, httplib::Response& res) {
    TagRequest("", "metrics");
    res.set_content(ctx.metrics.Render(), "text/plain; version=0.0.4");
  });
}

}  // namespace attune::server
