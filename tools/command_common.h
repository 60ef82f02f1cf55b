// What the attune subcommands share: session options from flags, input files, exit codes.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "attune/session.h"
#include "tools/cli_args.h"

namespace attune::cli {

/// The help text of the session flags, printed after every command's own usage.
extern const char kSessionFlagsHelp[];

/// Flags every command that builds a session accepts.
void AddSessionFlags(FlagSpec& spec);
/// The weight compression flags (--weights, --block, --symmetric, --accuracy-level, --keep-lm-head).
void AddWeightFlags(FlagSpec& spec);
/// WeightCompressionOptions from those flags; one line naming the flag for a bad value.
absl::StatusOr<WeightCompressionOptions> WeightCompressionFromArgs(const Args& args);
/// SessionOptions from --threads, --no-fuse, --attention-backend, --disable-pass, --verify-fusion, --max-tensor-mb.
absl::StatusOr<SessionOptions> SessionOptionsFromArgs(const Args& args);

/// Reads one tensor from a .npy or ONNX TensorProto .pb file.
absl::StatusOr<Tensor> ReadTensorFile(const std::string& path, int64_t max_bytes);
/// Parses repeated --input NAME=FILE flags.
absl::StatusOr<NamedTensors> ReadInputs(const Args& args, int64_t max_bytes);

/// A file name for an output: every character outside [A-Za-z0-9._-] becomes '_'.
std::string SanitizeFileName(const std::string& name);

/// Prints "error: <message>" on one line to stderr and returns the exit code:
/// 2 for bad usage, model or input; 1 for internal failures.
int ReportError(const absl::Status& status);

/// The frame of every subcommand: answers --help / -h with `usage` and the session flags on stdout
/// (exit 0), parses the flags in `spec`, runs `body` and turns its status into
/// the exit code. Exceptions become an internal error (exit 1), never a crash.
int RunSubcommand(int argc, char** argv, const char* usage, const FlagSpec& spec,
                  const std::function<absl::Status(const Args&)>& body);

}  // namespace attune::cli
