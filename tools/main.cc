#include <cstdio>
#include <cstring>
#include <string>

#include "tools/commands.h"

namespace {

constexpr char kUsage[] =
    "attune: ONNX inference for transformer models, with proven attention fusion\n"
    "\n"
    "usage: attune run MODEL.onnx [--input NAME=FILE]... [--output-dir DIR] [options]\n"
    "       attune inspect MODEL.onnx [--format text|json|dot] [--output FILE] [--save-optimized OUT.onnx]\n"
    "                      [--stop-after PASS] [options]\n"
    "       attune bench MODEL.onnx [--input NAME=FILE]... [--shape NAME=AxB]... [--dim SYMBOL=N]... [options]\n"
    "       attune generate MODEL.onnx [--decode-model DECODE.onnx] (--prompt TEXT | --prompt-ids ID,ID,...) [options]\n"
    "       attune tokenize --tokenizer FILE (--text TEXT | --file F | --decode ID,ID,...) [--json]\n"
    "       attune serve MODEL_OR_DIR... [--host 127.0.0.1] [--port 8080] [options]\n"
    "       attune quantize IN.onnx OUT.onnx --weights int4|int8 [--block N] [--symmetric] [--accuracy-level N]\n"
    "\n"
    "Run 'attune COMMAND --help' for a command's options.\n";

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "%serror: no command given\n", kUsage);
    return 2;
  }
  if (std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  const std::string command = argv[1];
  if (command == "run") return attune::cli::RunCommand(argc, argv);
  if (command == "inspect") return attune::cli::InspectCommand(argc, argv);
  if (command == "bench") return attune::cli::BenchCommand(argc, argv);
  if (command == "generate") return attune::cli::GenerateCommand(argc, argv);
  if (command == "serve") return attune::cli::ServeCommand(argc, argv);
  if (command == "tokenize") return attune::cli::TokenizeCommand(argc, argv);
  if (command == "quantize") return attune::cli::QuantizeCommand(argc, argv);
  std::fprintf(stderr, "%serror: unknown command '%s'\n", kUsage, command.c_str());
  return 2;
}
