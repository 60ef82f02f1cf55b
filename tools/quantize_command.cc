// attune quantize: a float32 ONNX file to one whose matrix products are
// com.microsoft.MatMulNBits (the weight compression pass that --weights runs
// at load, written out), then the accuracy report of the written file
// against the original.
#include <cstdio>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/validate/validate_graph.h"
#include "engine/passes/passes.h"
#include "importer/onnx_exporter.h"
#include "importer/onnx_importer.h"
#include "ops/registry.h"
#include "tools/command_common.h"
#include "tools/commands.h"
#include "tools/weights_accuracy.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune quantize IN.onnx OUT.onnx --weights int4|int8 [--block N] [--symmetric] [--accuracy-level N]\n"
    "                       [--keep-lm-head] [--input NAME=FILE]... [--no-accuracy-report]\n"
    "\n"
    "Writes IN with every MatMul / Gemm whose B is a constant as com.microsoft.MatMulNBits (B quantized\n"
    "blockwise along K as ONNX Runtime's MatMulNBitsQuantizer does; ONNX Runtime runs the file), then\n"
    "compares OUT with IN on a reference input (the --input files, else a generated one): the largest\n"
    "relative error of the logits and the top-1 agreement. Embeddings (Gather) stay float.\n"
    "\n"
    "  --weights int4|int8      bits per weight (required)\n"
    "  --block N                block size along K: 16, 32, 64, 128 or 256 (default 32)\n"
    "  --symmetric              no zero points (default: uint8 zero points per block)\n"
    "  --accuracy-level N       the nodes' accuracy_level, 0-4 (default 0; 4 lets a runtime quantize\n"
    "                           activations to int8 per block)\n"
    "  --keep-lm-head           leave products that write a graph output in float\n"
    "  --input NAME=FILE        an input of the reference run (repeatable)\n"
    "  --no-accuracy-report     skip the comparison\n";

constexpr int kMaxRounds = 16;

// The graph as the importer read it, with types known (the pass reads A's)
// and the products compressed; nothing else is changed.
absl::Status CompressGraph(Graph& graph, const WeightCompressionOptions& weights) {
  RETURN_IF_ERROR(ValidateGraph(graph));
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  auto run = [&](Pass& pass) -> absl::StatusOr<bool> {
    auto changed = pass.Run(graph, context);
    if (!changed.ok()) return Annotate(changed.status(), absl::StrCat("pass ", std::string(pass.name())));
    return changed;
  };
  // Types reach a product behind a chain of shape ops one inference round at
  // a time on a graph nothing has folded: repeat while any pass finds more.
  // Dead code (which also drops Identity and inference-mode Dropout) goes
  // in the round: a Gemm behind such a node is taken after it goes.
  auto shapes = MakeShapeInferencePass();
  auto compress = MakeWeightCompressionPass(weights);
  auto dead_code = MakeDeadCodePass();
  for (int round = 0; round < kMaxRounds; ++round) {
    ASSIGN_OR_RETURN(bool inferred, run(*shapes));
    ASSIGN_OR_RETURN(bool compressed, run(*compress));
    ASSIGN_OR_RETURN(bool removed, run(*dead_code));
    if (!inferred && !compressed && !removed) break;
  }
  return graph.Verify();
}

int CountQuantized(const Graph& graph) {
  int count = 0;
  for (const Node* n : graph.nodes()) count += n->op_type() == "MatMulNBits";
  return count;
}

absl::Status Quantize(const Args& args) {
  if (args.positionals().size() != 2) return absl::InvalidArgumentError("quantize needs IN.onnx and OUT.onnx");
  if (!args.Has("weights")) return absl::InvalidArgumentError("quantize needs --weights int4 or int8");
  ASSIGN_OR_RETURN(WeightCompressionOptions weights, WeightCompressionFromArgs(args));
  if (weights.format == WeightFormat::kBf16)
    return absl::InvalidArgumentError("quantize writes MatMulNBits: --weights must be int4 or int8 (bf16 is a load option)");
  const std::string& in = args.positionals()[0];
  const std::string& out = args.positionals()[1];
  if (in == out) return absl::InvalidArgumentError("quantize writes a new file: OUT.onnx must differ from IN.onnx");
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, ImportModelFromFile(in));
  RETURN_IF_ERROR(CompressGraph(*graph, weights));
  const int quantized = CountQuantized(*graph);
  RETURN_IF_ERROR(ExportModelToFile(*graph, out));
  graph.reset();
  std::printf("wrote      %s: %d products as MatMulNBits (%d bits, block %d, %s, accuracy_level %d)\n",
              EscapeControl(out).c_str(), quantized, weights.format == WeightFormat::kInt8 ? 8 : 4,
              weights.block_size, weights.symmetric ? "symmetric" : "asymmetric", weights.accuracy_level);
  if (quantized == 0 || args.Has("no-accuracy-report")) return absl::OkStatus();
  ASSIGN_OR_RETURN(NamedTensors given, ReadInputs(args, kDefaultMaxTensorBytes));
  auto accuracy = MeasureWeightAccuracy(in, out, SessionOptions{}, given);
  if (accuracy.ok()) {
    std::printf("%s\n", FormatWeightAccuracy(weights, *accuracy).c_str());
  } else {
    std::printf("accuracy   not measured: %s\n", EscapeControl(std::string(accuracy.status().message())).c_str());
  }
  return absl::OkStatus();
}

}  // namespace

int QuantizeCommand(int argc, char** argv) {
  FlagSpec spec{{"input"}, {}};
  AddWeightFlags(spec);
  return RunSubcommand(argc, argv, kUsage, spec, Quantize);
}

}  // namespace attune::cli
