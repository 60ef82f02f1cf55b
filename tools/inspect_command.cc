#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "attune/generator.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/session_access.h"
#include "importer/attention_export.h"
#include "tools/command_common.h"
#include "tools/commands.h"
#include "tools/report_dot.h"
#include "tools/report_json.h"
#include "tools/report_quantized.h"
#include "tools/report_text.h"
#include "tools/weights_accuracy.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune inspect MODEL.onnx [--format text|json|dot] [--output FILE] [--save-optimized OUT.onnx]\n"
    "                      [--stop-after PASS] [options]\n"
    "       attune inspect --passes\n"
    "\n"
    "Shows what the optimiser did: op counts before and after, every fusion, every rejected candidate,\n"
    "and every quantized product (format, bits, block, symmetry, accuracy mode).\n"
    "\n"
    "  --format text|json|dot   report format (default text); dot is the optimised graph for Graphviz\n"
    "  --show-all               dot: draw every node (default folds shape computations and repeated layers)\n"
    "  --output FILE            write the report to FILE instead of stdout\n"
    "  --save-optimized OUT     write the optimised graph as ONNX (fused attention as ONNX Attention, opset 23,\n"
    "                           where that op is equivalent; with attention sinks, or weights it cannot\n"
    "                           give, the standard subgraph; else attune.MultiHeadAttention)\n"
    "  --stop-after PASS        run the optimiser only up to and including the first run of PASS and show\n"
    "                           the graph as it is then (every format; text and json list its nodes);\n"
    "                           'attune inspect --passes' lists the names\n"
    "  --passes                 list the optimiser's passes\n";

absl::Status WriteText(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return absl::OkStatus();
  }
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(text.data(), text.size()))
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", QuoteName(path)));
  return absl::OkStatus();
}

nlohmann::json ExportSummaryToJson(const std::string& path, const AttentionExportSummary& s) {
  nlohmann::json kept = nlohmann::json::array();
  nlohmann::json differs = nlohmann::json::array();
  for (const AttentionExportNote& note : s.notes) {
    if (!note.as_onnx_attention && !note.as_subgraph && !note.as_vendor_op) kept.push_back({{"node", note.node}, {"reason", note.reason}});
    if (!note.nonfinite_difference.empty())
      differs.push_back({{"node", note.node}, {"difference", note.nonfinite_difference}});
  }
  return {{"path", path},
          {"attention_ops", s.attention_ops},
          {"attention_subgraphs", s.attention_subgraphs},
          {"group_query_attention_ops", s.group_query_attention_ops},
          {"kept_as_multi_head_attention", kept},
          {"nonfinite_differences", differs},
          {"default_opset_before", s.default_opset_before},
          {"default_opset", s.default_opset_after}};
}

absl::Status Inspect(const Args& args) {
  if (args.Has("passes")) {
    std::string text;
    for (const std::string& name : ListPasses()) absl::StrAppend(&text, name, "\n");
    return WriteText(args.Value("output").value_or(""), text);
  }
  if (args.positionals().size() != 1) return absl::InvalidArgumentError("inspect needs exactly one MODEL.onnx");
  ASSIGN_OR_RETURN(SessionOptions options, SessionOptionsFromArgs(args));
  if (auto stop = args.Value("stop-after")) {
    if (stop->empty()) return absl::InvalidArgumentError("--stop-after needs a pass name ('attune inspect --passes')");
    options.stop_after_pass = *stop;
  }
  const std::string format = args.Value("format").value_or("text");
  if (format != "text" && format != "json" && format != "dot")
    return absl::InvalidArgumentError(absl::StrCat("--format must be text, json or dot, got ", QuoteName(format)));
  const std::string model_path = args.positionals()[0];
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(model_path, options));
  const SessionImpl& impl = GetSessionImpl(*session);
  nlohmann::json report = ReportToJson(model_path, impl);
  report["quantized_products"] = QuantizedProductsToJson(impl.graph());
  // A decoder's convention (its cache pairs), as attune generate would use it.
  std::vector<std::string> convention;
  auto decoder = FindDecoderSignature(*session, {}, true);
  if (!decoder.ok()) decoder = FindDecoderSignature(*session, {}, false);
  if (decoder.ok()) {
    convention = DescribeDecoderSignature(*decoder);
    nlohmann::json cache = nlohmann::json::array();
    for (const CacheBinding& b : decoder->cache)
      cache.push_back({{"past", b.past}, {"present", b.present}, {"layer", b.layer}, {"kind", b.kind},
                       {"seq_axis", b.seq_axis}});
    report["decoder"] = {{"input_ids", decoder->input_ids},       {"attention_mask", decoder->attention_mask},
                         {"position_ids", decoder->position_ids}, {"logits", decoder->logits},
                         {"vocab_size", decoder->vocab_size},     {"context", decoder->context},
                         {"cache", cache}};
  }
  if (auto saved = args.Value("save-optimized")) {
    if (saved->empty()) return absl::InvalidArgumentError("--save-optimized needs a file name");
    AttentionExportSummary summary;
    RETURN_IF_ERROR(ExportOptimizedModelToFile(impl.graph(), *saved, &summary));
    report["saved_model"] = ExportSummaryToJson(*saved, summary);
  }
  const std::string output = args.Value("output").value_or("");
  if (format == "json") return WriteText(output, report.dump(2) + "\n");
  if (format == "dot") {
    DotOptions dot;
    dot.show_all = args.Has("show-all");
    dot.title = impl.report().stopped_after.empty()
                    ? model_path
                    : absl::StrCat(model_path, " after ", impl.report().stopped_after);
    return WriteText(output, RenderDot(impl.graph(), impl.report(), dot));
  }
  std::string text = RenderTextReport(report, output.empty() && isatty(STDOUT_FILENO));
  if (!report["quantized_products"].empty()) absl::StrAppend(&text, QuantizedProductsText(report["quantized_products"]));
  if (!convention.empty()) {
    absl::StrAppend(&text, "\ndecoder convention (attune generate)\n");
    for (const std::string& line : convention) absl::StrAppend(&text, "  ", EscapeControl(line), "\n");
  }
  RETURN_IF_ERROR(WriteText(output, text));
  session.reset();
  ASSIGN_OR_RETURN(NamedTensors given, ReadInputs(args, options.max_tensor_bytes));
  PrintWeightAccuracy(args, output.empty() ? stdout : stderr, model_path, options, given);
  return absl::OkStatus();
}

}  // namespace

int InspectCommand(int argc, char** argv) {
  FlagSpec spec{{"format", "output", "save-optimized", "stop-after", "input"}, {"passes", "show-all"}};
  AddSessionFlags(spec);
  return RunSubcommand(argc, argv, kUsage, spec, Inspect);
}

}  // namespace attune::cli
