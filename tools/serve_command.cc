// attune serve: the inference server (server/) from the command line.
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "server/server.h"
#include "tools/command_common.h"
#include "tools/commands.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune serve MODEL_OR_DIR... [--host 127.0.0.1] [--port 8080] [--grpc-port 8081] [options]\n"
    "\n"
    "Serves ONNX models with the Open Inference Protocol (KServe v2) over HTTP: health, metadata and\n"
    "inference under /v2 (JSON tensors and the binary tensor data extension), /metrics for Prometheus;\n"
    "and over gRPC: inference.GRPCInferenceService (raw or typed tensor contents).\n"
    "Decoder models with a KV cache also generate: /v2/models/NAME/generate and /generate_stream\n"
    "(Triton's generate extension, server-sent events) and /v1/completions, /v1/models (OpenAI style),\n"
    "with concurrent generations on a model run as one decode batch (continuous batching; the prompts\n"
    "of requests that arrive together run as one prefill). Prompts are token ids (input_ids, or an\n"
    "OpenAI prompt given as an array of ids) or, for a model with a tokenizer.json or tokenizer.model\n"
    "beside its file, text (text_input, or a string prompt): the answer is then text too, ended by the\n"
    "tokenizer's end-of-sequence ids or a \"stop\" string.\n"
    "\n"
    "MODEL_OR_DIR is a .onnx file (served under its stem), a folder holding one model (model.onnx or a\n"
    "single .onnx, directly or in numeric version folders: served under the folder's name), or a folder\n"
    "of such folders (the KServe layout /mnt/models/NAME/...). Models load at start; /v2/health/ready\n"
    "answers 200 once all have loaded. SIGTERM or SIGINT stops accepting, finishes the requests in\n"
    "flight and exits 0.\n"
    "\n"
    "  --host ADDR              address to listen on (default 127.0.0.1: this machine only;\n"
    "                           0.0.0.0 accepts connections from other machines)\n"
    "  --port N                 HTTP port (default 8080)\n"
    "  --grpc-port N            gRPC port (default 8081; 0: no gRPC)\n"
    "  --model-name NAME        serve a single model under NAME\n"
    "  --max-concurrency K      inference runs at once (default: the number of cores)\n"
    "  --max-queue Q            requests waiting for a run (default 64); beyond, 503 with Retry-After\n"
    "  --max-batch B            sequences in one model's decode batch (default 16); more wait in the queue\n"
    "  --max-request-mb N       largest request body (default 64); larger get 413\n"
    "  --max-input-mb N         largest input tensor (default 256); larger get 400\n"
    "  --request-timeout S      seconds a request may wait in the queue, and a generation may run\n"
    "                           (default 60)\n"
    "  --access-log FILE        one JSON line per request to FILE (default -: stderr; 'off': none)\n"
    "\n"
    "--threads sets the threads of each inference run (default 1 here: concurrent requests use the\n"
    "cores; 0 = all cores per run).\n";

absl::Status Serve(const Args& args) {
  server::ServerOptions o;
  if (args.positionals().empty()) return absl::InvalidArgumentError("serve needs at least one MODEL_OR_DIR");
  o.model_paths = args.positionals();
  o.model_name = args.Value("model-name").value_or("");
  o.host = args.Value("host").value_or("127.0.0.1");
  ASSIGN_OR_RETURN(const int64_t port, args.Int("port", 8080));
  if (port < 1 || port > 65535) return absl::InvalidArgumentError("--port must be in [1, 65535]");
  o.port = static_cast<int>(port);
  ASSIGN_OR_RETURN(const int64_t grpc_port, args.Int("grpc-port", 8081));
  if (grpc_port < 0 || grpc_port > 65535) return absl::InvalidArgumentError("--grpc-port must be in [0, 65535]");
  if (grpc_port == port) return absl::InvalidArgumentError("--grpc-port must differ from --port");
  o.grpc_port = static_cast<int>(grpc_port);
  ASSIGN_OR_RETURN(o.session, SessionOptionsFromArgs(args));
  if (!args.Has("threads")) o.session.threads = 1;
  ASSIGN_OR_RETURN(const int64_t concurrency, args.Int("max-concurrency", 0));
  ASSIGN_OR_RETURN(const int64_t queue, args.Int("max-queue", 64));
  ASSIGN_OR_RETURN(const int64_t batch, args.Int("max-batch", 16));
  ASSIGN_OR_RETURN(const int64_t request_mb, args.Int("max-request-mb", 64));
  ASSIGN_OR_RETURN(const int64_t input_mb, args.Int("max-input-mb", 256));
  ASSIGN_OR_RETURN(const double timeout, args.Double("request-timeout", 60));
  if (concurrency > 1024 || queue > 100000 || batch < 1 || batch > 1024)
    return absl::InvalidArgumentError("--max-concurrency at most 1024, --max-queue at most 100000, "
                                      "--max-batch in [1, 1024]");
  if (request_mb < 1 || request_mb > 65536 || input_mb < 1 || input_mb > 65536)
    return absl::InvalidArgumentError("--max-request-mb and --max-input-mb must be in [1, 65536]");
  if (!(timeout > 0) || timeout > 86400) return absl::InvalidArgumentError("--request-timeout must be in (0, 86400]");
  o.max_concurrency = static_cast<int>(concurrency);
  o.max_queue = static_cast<int>(queue);
  o.max_batch = static_cast<int>(batch);
  o.max_request_bytes = request_mb << 20;
  o.max_tensor_bytes = input_mb << 20;
  o.request_timeout_s = timeout;
  o.access_log = args.Value("access-log").value_or("-");
  if (o.access_log == "off") o.access_log = "";
  return server::RunServer(o);
}

}  // namespace

int ServeCommand(int argc, char** argv) {
  FlagSpec spec{{"host", "port", "grpc-port", "model-name", "max-concurrency", "max-queue", "max-batch",
                 "max-request-mb", "max-input-mb", "request-timeout", "access-log"},
                {}};
  AddSessionFlags(spec);
  return RunSubcommand(argc, argv, kUsage, spec, Serve);
}

}  // namespace attune::cli
