#include <chrono>
#include <cstdio>
#include <filesystem>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"
#include "engine/io/npy.h"
#include "tools/command_common.h"
#include "tools/commands.h"
#include "tools/weights_accuracy.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune run MODEL.onnx [--input NAME=FILE]... [--output-dir DIR] [options]\n"
    "\n"
    "Runs the model once and prints each output's type and shape.\n"
    "\n"
    "  --input NAME=FILE        a graph input from .npy or ONNX TensorProto .pb (repeatable)\n"
    "  --output-dir DIR         write each output as DIR/<name>.npy\n";

absl::Status Run(const Args& args) {
  if (args.positionals().size() != 1) return absl::InvalidArgumentError("run needs exactly one MODEL.onnx");
  ASSIGN_OR_RETURN(SessionOptions options, SessionOptionsFromArgs(args));
  const std::string model_path = args.positionals()[0];
  ASSIGN_OR_RETURN(NamedTensors inputs, ReadInputs(args, options.max_tensor_bytes));

  const auto load_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(model_path, options));
  const auto run_start = std::chrono::steady_clock::now();
  ASSIGN_OR_RETURN(NamedTensors outputs, session->Run(inputs));
  const auto run_end = std::chrono::steady_clock::now();

  const std::string out_dir = args.Value("output-dir").value_or("");
  if (!out_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(out_dir, ec);
    if (ec)
      return absl::InvalidArgumentError(
          absl::StrCat("cannot create output folder ", QuoteName(out_dir), ": ", ec.message()));
  }
  const auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
  const FusionReport& report = session->fusion_report();
  int causal = 0, window = 0;
  for (const FusionRecord& f : report.fusions) {
    auto kind = mha::ParseMaskKind(f.mask);
    if (f.undone || !kind.ok()) continue;
    causal += mha::WithoutKeyPadding(*kind) == mha::MaskKind::kCausal;
    window += mha::WithoutKeyPadding(*kind) == mha::MaskKind::kWindow;
  }
  std::printf("model      %s\n", model_path.c_str());
  std::printf("fusions    %zu attention (%d causal, %d window)%s\n", report.fusions.size(), causal, window,
              options.fuse ? "" : "  [--no-fuse]");
  std::printf("load       %.1f ms\nrun        %.2f ms\n", ms(load_start, run_start), ms(run_start, run_end));
  for (const auto& [name, tensor] : outputs) {
    std::string written;
    if (!out_dir.empty()) {
      const std::string path = (std::filesystem::path(out_dir) / (SanitizeFileName(name) + ".npy")).string();
      RETURN_IF_ERROR(WriteNpyFile(path, tensor));
      written = "  -> " + path;
    }
    std::printf("output     %s %s%s\n", name.c_str(), tensor.DebugString().c_str(), written.c_str());
  }
  PrintWeightAccuracy(args, stdout, model_path, options, inputs);
  return absl::OkStatus();
}

}  // namespace

int RunCommand(int argc, char** argv) {
  FlagSpec spec{{"input", "output-dir"}, {}};
  AddSessionFlags(spec);
  return RunSubcommand(argc, argv, kUsage, spec, Run);
}

}  // namespace attune::cli
