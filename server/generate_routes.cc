// Text generation endpoints for decoder models: Triton's generate extension
// (/v2/models/{name}/generate and /generate_stream, server-sent events) and
// OpenAI-style /v1/completions and /v1/models. Prompts are token ids
// (input_ids, or an OpenAI prompt given as an array of ids) or text
// (text_input, or a string prompt) for a model with a tokenizer beside its
// file; such a model answers with text too, cut at stop strings and ended by
// the tokenizer's end-of-sequence ids.
#include <httplib.h>

#include <ctime>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "server/generation_engine.h"
#include "server/server_context.h"

namespace attune::server {
namespace {

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

absl::Status Bad(const std::string& message) { return absl::InvalidArgumentError(message); }

// A field from `parameters` or, failing that, from the top level (Triton accepts both).
const json* Field(const json& doc, const char* name) {
  if (doc.contains("parameters") && doc["parameters"].is_object() && doc["parameters"].contains(name))
    return &doc["parameters"][name];
  if (doc.contains(name)) return &doc[name];
  return nullptr;
}

absl::StatusOr<std::vector<int64_t>> PromptIds(const json& ids, int64_t vocab, const char* field) {
  if (!ids.is_array() || ids.empty()) return Bad(absl::StrCat("\"", field, "\" must be a non-empty array of token ids"));
  std::vector<int64_t> out;
  for (const json& t : ids) {
    if (!t.is_number_integer()) return Bad(absl::StrCat("\"", field, "\" holds ", Dump(t), ", not a token id"));
    const int64_t id = t.get<int64_t>();
    if (id < 0 || (vocab > 0 && id >= vocab) || (t.is_number_unsigned() && t.get<uint64_t>() > INT64_MAX))
      return Bad(absl::StrCat("token id ", Dump(t), " is outside the vocabulary [0, ", vocab, ")"));
    out.push_back(id);
  }
  return out;
}

// The ids of a text prompt, through the model's tokenizer (special tokens
// added, as `attune generate --prompt` does).
absl::StatusOr<std::vector<int64_t>> TextPrompt(const ServedModel& model, const json& text, const char* field) {
  if (!model.tokenizer)
    return Bad(absl::StrCat("model '", model.source.name, "' has no tokenizer (no tokenizer.json or tokenizer.model ",
                            "beside its file): give the prompt as token ids"));
  if (!text.is_string()) return Bad(absl::StrCat("\"", field, "\" must be a string"));
  auto ids = model.tokenizer->Encode(text.get_ref<const std::string&>());
  if (!ids.ok()) return Bad(absl::StrCat("\"", field, "\": ", ids.status().message()));
  if (ids->empty()) return Bad(absl::StrCat("\"", field, "\" encodes to no tokens"));
  return ids;
}

// Stop strings ("stop": a string or an array of them), which need the text.
absl::StatusOr<std::vector<std::string>> ReadStops(const json& doc, const ServedModel& model) {
  std::vector<std::string> stops;
  const json* v = Field(doc, "stop");
  if (v == nullptr || v->is_null()) return stops;
  if (!model.tokenizer)
    return Bad(absl::StrCat("model '", model.source.name, "' has no tokenizer: \"stop\" strings need one"));
  const json list = v->is_array() ? *v : json::array({*v});
  if (list.size() > 16) return Bad("\"stop\" holds more than 16 strings");
  for (const json& s : list) {
    if (!s.is_string() || s.get_ref<const std::string&>().empty() || s.get_ref<const std::string&>().size() > 1024)
      return Bad("\"stop\" must be a string or an array of strings of 1 to 1024 bytes");
    stops.push_back(s.get<std::string>());
  }
  return stops;
}

// Sampling from the fields: temperature 0 means greedy; `sample_by_default`
// is OpenAI's default temperature of 1.
absl::Status ReadSampling(const json& doc, bool sample_by_default, int64_t default_max_tokens, GenerationOptions& o) {
  o.max_new_tokens = default_max_tokens;
  if (const json* v = Field(doc, "max_tokens")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 1 || v->get<int64_t>() > 65536)
      return Bad("\"max_tokens\" must be an integer in [1, 65536]");
    o.max_new_tokens = v->get<int64_t>();
  }
  double temperature = sample_by_default ? 1.0 : 0.0;
  if (const json* v = Field(doc, "temperature")) {
    if (!v->is_number() || v->get<double>() < 0 || v->get<double>() > 100)
      return Bad("\"temperature\" must be a number in [0, 100]");
    temperature = v->get<double>();
  }
  o.top_p = 1;
  if (const json* v = Field(doc, "top_p")) {
    if (!v->is_number() || !(v->get<double>() > 0) || v->get<double>() > 1) return Bad("\"top_p\" must be in (0, 1]");
    o.top_p = static_cast<float>(v->get<double>());
  }
  o.top_k = 0;
  if (const json* v = Field(doc, "top_k")) {
    if (!v->is_number_integer() || v->get<int64_t>() < 0) return Bad("\"top_k\" must be a non-negative integer");
    o.top_k = v->get<int64_t>();
  }
  const bool sampling_asked = Field(doc, "top_p") != nullptr || Field(doc, "top_k") != nullptr;
  o.greedy = temperature == 0 || (!sample_by_default && Field(doc, "temperature") == nullptr && !sampling_asked);
  o.temperature = temperature > 0 ? static_cast<float>(temperature) : 1.0f;
  for (const char* name : {"seed", "random_seed"})
    if (const json* v = Field(doc, name)) {
      if (!v->is_number_integer()) return Bad(absl::StrCat("\"", name, "\" must be an integer"));
      o.seed = v->get<uint64_t>();
    }
  for (const char* name : {"eos_id", "end_id"})
    if (const json* v = Field(doc, name)) {
      if (!v->is_number_integer()) return Bad(absl::StrCat("\"", name, "\" must be an integer"));
      o.eos_id = v->get<int64_t>();
    }
  return absl::OkStatus();
}

// The options of a request to `model`: sampling, and the tokenizer's
// end-of-sequence ids unless the request gives its own.
absl::StatusOr<GenerationOptions> ReadOptions(const json& doc, const ServedModel& model, bool sample_by_default,
                                              int64_t default_max_tokens) {
  GenerationOptions o;
  if (absl::Status ok = ReadSampling(doc, sample_by_default, default_max_tokens, o); !ok.ok()) return ok;
  const bool eos_given = Field(doc, "eos_id") != nullptr || Field(doc, "end_id") != nullptr;
  if (!eos_given && model.tokenizer && !model.tokenizer->eos_ids().empty()) {
    const std::vector<int64_t>& eos = model.tokenizer->eos_ids();
    o.eos_id = eos[0];
    o.stop_ids.assign(eos.begin() + 1, eos.end());
  }
  return o;
}

struct GenerateCall {
  ServedModel* model = nullptr;
  std::shared_ptr<GenerationJob> job;
  bool stream = false;
};

absl::StatusOr<ServedModel*> GenerativeModel(ServerContext& ctx, const std::string& name, const std::string& version) {
  auto model = ctx.Find(name, version);
  if (!model.ok()) return model.status();
  if (!(*model)->generation)
    return Bad(absl::StrCat("model '", name, "' is not a decoder with a KV cache: it cannot generate"));
  return model;
}

absl::Status Submit(ServerContext& ctx, GenerateCall& call, std::vector<int64_t> prompt, const GenerationOptions& o,
                    std::vector<std::string> stops) {
  call.job = std::make_shared<GenerationJob>();
  if (call.model->tokenizer) call.job->text_out = std::make_unique<GeneratedText>(*call.model->tokenizer, std::move(stops));
  call.job->prompt = std::move(prompt);
  call.job->options = o;
  call.job->options.max_cache_bytes = ctx.options.max_tensor_bytes;
  call.job->deadline = ctx.Deadline();
  if (ctx.stopping) return absl::UnavailableError("the server is shutting down");
  return call.model->generation->Submit(call.job);
}

// Waits for the whole generation (non-streaming).
absl::Status Wait(GenerationJob& job) {
  size_t seen = 0;
  for (;;) {
    JobUpdate update = job.WaitFor(seen);
    seen += update.tokens.size();
    if (update.done) break;
  }
  std::lock_guard<std::mutex> lock(job.mutex);
  return job.status;
}

// The event for some new ids and their text, with the finish reason ("" while running).
using EventMaker = std::function<json(const std::vector<int64_t>&, const std::string&, const std::string&)>;

// The server-sent events of one update: one per token, the text held back
// until the end added to the last, which carries the finish reason.
std::string StreamEvents(GenerationJob& job, const JobUpdate& update, const EventMaker& event) {
  std::string reason, rest;
  absl::Status status;
  if (update.done) {
    std::lock_guard<std::mutex> lock(job.mutex);
    reason = job.finish_reason;
    status = job.status;
    rest = job.text_rest;
  }
  if (!status.ok()) return absl::StrCat("data: ", Dump(json{{"error", std::string(status.message())}}), "\n\n");
  std::string out;
  const size_t n = update.tokens.size();
  for (size_t i = 0; i < n; ++i) {
    const bool last = update.done && i + 1 == n;
    out += absl::StrCat("data: ", Dump(event({update.tokens[i]}, update.text[i] + (last ? rest : ""), last ? reason : "")),
                        "\n\n");
  }
  if (n == 0 && update.done) out += absl::StrCat("data: ", Dump(event({}, rest, reason)), "\n\n");
  return out;
}

// Streams each token as one server-sent event made by `event`; `tail` follows the final event.
void Stream(httplib::Response& res, std::shared_ptr<GenerationJob> job, EventMaker event, std::string tail) {
  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [job, event, tail, seen = size_t{0}](size_t, httplib::DataSink& sink) mutable {
        JobUpdate update = job->WaitFor(seen);
        seen += update.tokens.size();
        std::string out = StreamEvents(*job, update, event);
        if (update.done) out += tail;
        if (!out.empty() && !sink.write(out.data(), out.size())) {
          job->cancelled = true;
          return false;
        }
        if (update.done) sink.done();
        return true;
      },
      [job](bool success) {
        if (!success) job->cancelled = true;
      });
}

void Generate(ServerContext& ctx, const httplib::Request& req, httplib::Response& res, bool stream) {
  const std::string name = req.matches[1];
  TagRequest(name, stream ? "generate_stream" : "generate");
  GenerateCall call;
  auto model = GenerativeModel(ctx, name, req.matches.size() > 2 ? std::string(req.matches[2]) : "");
  if (!model.ok()) return SendError(res, model.status());
  call.model = *model;
  auto doc = ParseJson(req.body, ctx.limits);
  if (!doc.ok()) return SendError(res, doc.status());
  if (!doc->is_object()) return SendError(res, Bad("the generate request must be a JSON object"));
  const int64_t vocab = call.model->generation->vocab_size();
  absl::StatusOr<std::vector<int64_t>> prompt = Bad("give \"text_input\" (text) or \"input_ids\" (token ids)");
  if (const json* ids = Field(*doc, "input_ids")) prompt = PromptIds(*ids, vocab, "input_ids");
  else if (doc->contains("text_input")) prompt = TextPrompt(*call.model, (*doc)["text_input"], "text_input");
  if (!prompt.ok()) return SendError(res, prompt.status());
  auto options = ReadOptions(*doc, *call.model, false, 20);
  if (!options.ok()) return SendError(res, options.status());
  auto stops = ReadStops(*doc, *call.model);
  if (!stops.ok()) return SendError(res, stops.status());
  if (absl::Status ok = Submit(ctx, call, *std::move(prompt), *options, *std::move(stops)); !ok.ok())
    return SendError(res, ok);
  const std::string version = call.model->source.version;
  auto event = [name, version](const std::vector<int64_t>& ids, const std::string& text, const std::string& reason) {
    json e = {{"model_name", name}, {"model_version", version}, {"text_output", text}, {"output_ids", ids}};
    if (!reason.empty()) e["details"] = {{"finish_reason", reason}};
    return e;
  };
  if (stream) return Stream(res, call.job, event, "");
  if (absl::Status ok = Wait(*call.job); !ok.ok()) return SendError(res, ok);
  json out = event(call.job->tokens, call.job->FullText(), call.job->finish_reason);
  out["details"]["generated_tokens"] = call.job->tokens.size();
  SendJson(res, Dump(out));
}

std::string OpenAiFinish(const std::string& reason) {
  return reason == "eos_token" || reason == "stop" ? "stop" : reason;
}

void Completions(ServerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  TagRequest("", "completions");
  auto doc = ParseJson(req.body, ctx.limits);
  if (!doc.ok()) return SendError(res, doc.status());
  if (!doc->is_object() || !doc->contains("model") || !(*doc)["model"].is_string())
    return SendError(res, Bad("the completion request needs a \"model\" string"));
  const std::string name = (*doc)["model"].get<std::string>();
  TagRequest(name, "completions");
  GenerateCall call;
  auto model = GenerativeModel(ctx, name, "");
  if (!model.ok()) return SendError(res, model.status());
  call.model = *model;
  if (doc->contains("n") && (*doc)["n"] != 1) return SendError(res, Bad("only \"n\": 1 is supported"));
  if (!doc->contains("prompt")) return SendError(res, Bad("the completion request needs a \"prompt\""));
  const json& p = (*doc)["prompt"];
  // A string, or an array holding one string (OpenAI's batch of one); else token ids.
  const bool one_text = p.is_array() && p.size() == 1 && p[0].is_string();
  absl::StatusOr<std::vector<int64_t>> prompt =
      p.is_string() || one_text ? TextPrompt(*call.model, one_text ? p[0] : p, "prompt")
      : p.is_array() && !p.empty() && p[0].is_string()
          ? absl::StatusOr<std::vector<int64_t>>(Bad("only one prompt per request is supported"))
          : PromptIds(p, call.model->generation->vocab_size(), "prompt");
  if (!prompt.ok()) return SendError(res, prompt.status());
  const int64_t prompt_tokens = static_cast<int64_t>(prompt->size());
  auto options = ReadOptions(*doc, *call.model, true, 16);
  if (!options.ok()) return SendError(res, options.status());
  auto stops = ReadStops(*doc, *call.model);
  if (!stops.ok()) return SendError(res, stops.status());
  const bool stream = doc->contains("stream") && (*doc)["stream"].is_boolean() && (*doc)["stream"].get<bool>();
  if (absl::Status ok = Submit(ctx, call, *std::move(prompt), *options, *std::move(stops)); !ok.ok())
    return SendError(res, ok);
  const std::string id = absl::StrCat("cmpl-", reinterpret_cast<uintptr_t>(call.job.get()), "-", std::time(nullptr));
  const int64_t created = std::time(nullptr);
  auto event = [=](const std::vector<int64_t>& ids, const std::string& text, const std::string& reason) {
    json choice = {{"index", 0}, {"text", text}, {"token_ids", ids}, {"logprobs", nullptr},
                   {"finish_reason", reason.empty() ? json(nullptr) : json(OpenAiFinish(reason))}};
    return json{{"id", id}, {"object", "text_completion"}, {"created", created}, {"model", name},
                {"choices", {choice}}};
  };
  if (stream) return Stream(res, call.job, event, "data: [DONE]\n\n");
  if (absl::Status ok = Wait(*call.job); !ok.ok()) return SendError(res, ok);
  json out = event(call.job->tokens, call.job->FullText(), call.job->finish_reason);
  const int64_t completion = static_cast<int64_t>(call.job->tokens.size());
  out["usage"] = {{"prompt_tokens", prompt_tokens},
                  {"completion_tokens", completion},
                  {"total_tokens", prompt_tokens + completion}};
  SendJson(res, Dump(out));
}

}  // namespace

void InstallGenerateRoutes(httplib::Server& http, ServerContext& ctx) {
  constexpr char kModel[] = R"(/v2/models/([^/]+)(?:/versions/([^/]+))?)";
  http.Post(std::string(kModel) + "/generate",
            [&](const httplib::Request& req, httplib::Response& res) { Generate(ctx, req, res, false); });
  http.Post(std::string(kModel) + "/generate_stream",
            [&](const httplib::Request& req, httplib::Response& res) { Generate(ctx, req, res, true); });
  http.Post("/v1/completions",
            [&](const httplib::Request& req, httplib::Response& res) { Completions(ctx, req, res); });
  http.Get("/v1/models", [&](const httplib::Request&, httplib::Response& res) {
    TagRequest("", "models");
    json data = json::array();
    if (ctx.ready)
      for (const auto& m : ctx.models)
        data.push_back({{"id", m->source.name}, {"object", "model"}, {"created", 0}, {"owned_by", "attune"}});
    SendJson(res, Dump(json{{"object", "list"}, {"data", data}}));
  });
}

}  // namespace attune::server
