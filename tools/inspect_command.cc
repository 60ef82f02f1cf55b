#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"
#include "engine/session_access.h"
#include "tools/command_common.h"
#include "tools/commands.h"
#include "tools/report_json.h"
#include "tools/report_text.h"

namespace attune::cli {
namespace {

constexpr char kUsage[] =
    "usage: attune inspect MODEL.onnx [--format text|json] [--output FILE] [--passes]\n"
    "                      [--no-fuse] [--disable-pass NAME]... [--verify-fusion] [--threads N]\n";

absl::Status WriteText(const std::string& path, const std::string& text) {
  if (path.empty()) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    return absl::OkStatus();
  }
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(text.data(), text.size()))
    return absl::InvalidArgumentError(absl::StrCat("cannot write '", path, "'"));
  return absl::OkStatus();
}

absl::Status Inspect(const Args& args) {
  if (args.Has("passes")) {
    std::string text;
    for (const std::string& name : ListPasses()) absl::StrAppend(&text, name, "\n");
    return WriteText(args.Value("output").value_or(""), text);
  }
  if (args.positionals().size() != 1) return absl::InvalidArgumentError("inspect needs exactly one MODEL.onnx");
  ASSIGN_OR_RETURN(SessionOptions options, SessionOptionsFromArgs(args));
  const std::string format = args.Value("format").value_or("text");
  if (format != "text" && format != "json")
    return absl::InvalidArgumentError(absl::StrCat("--format must be text or json, got '", format, "'"));
  const std::string model_path = args.positionals()[0];
  ASSIGN_OR_RETURN(std::unique_ptr<Session> session, Session::Create(model_path, options));
  const nlohmann::json report = ReportToJson(model_path, GetSessionImpl(*session));
  const std::string output = args.Value("output").value_or("");
  if (format == "json") return WriteText(output, report.dump(2) + "\n");
  return WriteText(output, RenderTextReport(report, output.empty() && isatty(STDOUT_FILENO)));
}

}  // namespace

int InspectCommand(int argc, char** argv) {
  FlagSpec spec{{"format", "output"}, {"passes"}};
  AddSessionFlags(spec);
  auto args = Args::Parse(argc, argv, 2, spec);
  if (!args.ok()) {
    std::fputs(kUsage, stderr);
    return ReportError(args.status());
  }
  absl::Status status = Inspect(*args);
  return status.ok() ? 0 : ReportError(status);
}

}  // namespace attune::cli
