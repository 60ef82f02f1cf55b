#include "tools/command_common.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <string_view>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "engine/io/npy.h"
#include "importer/tensor_proto.h"

namespace attune::cli {

const char kSessionFlagsHelp[] =
    "session options:\n"
    "  --threads N              threads in total for a run (default: all cores)\n"
    "  --no-fuse                skip the fusions (canonicalisation still runs)\n"
    "  --disable-pass NAME      skip one pass (repeatable; 'attune inspect --passes' lists them)\n"
    "  --verify-fusion          check every fusion numerically; undo it above tolerance\n"
    "  --attention-backend B    auto, simd, onednn or reference\n"
    "  --max-tensor-mb N        largest tensor allowed, in MiB (weights, inputs, intermediates)\n"
    "  --max-loop-iterations N  most iterations one Loop or Scan node may run (default 16777216)\n"
    "  --weights F              compress the float weights of products at load: bf16, int8 or int4\n"
    "                           (int: MatMulNBits, blockwise along K; docs/quantization.md)\n"
    "  --block N                --weights block size along K: 16, 32, 64, 128 or 256 (default 32)\n"
    "  --symmetric              --weights without zero points (default: uint8 zero points per block)\n"
    "  --accuracy-level N       --weights accuracy_level: 4 quantizes activations to int8 per block (default 0)\n"
    "  --keep-lm-head           --weights leaves products that write a graph output in float\n"
    "  --no-accuracy-report     --weights without the comparison against the float32 model\n";

void AddSessionFlags(FlagSpec& spec) {
  spec.valued.insert({"threads", "attention-backend", "disable-pass", "max-tensor-mb", "max-loop-iterations"});
  spec.switches.insert({"no-fuse", "verify-fusion"});
  AddWeightFlags(spec);
}

void AddWeightFlags(FlagSpec& spec) {
  spec.valued.insert({"weights", "block", "accuracy-level"});
  spec.switches.insert({"symmetric", "keep-lm-head", "no-accuracy-report"});
}

absl::StatusOr<WeightCompressionOptions> WeightCompressionFromArgs(const Args& args) {
  WeightCompressionOptions w;
  const std::optional<std::string> format = args.Value("weights");
  if (format == "int4") w.format = WeightFormat::kInt4;
  else if (format == "int8") w.format = WeightFormat::kInt8;
  else if (format == "bf16") w.format = WeightFormat::kBf16;
  else if (format.has_value())
    return absl::InvalidArgumentError(absl::StrCat("--weights must be bf16, int8 or int4, got ", QuoteName(*format)));
  const bool tuned = args.Has("block") || args.Has("symmetric") || args.Has("accuracy-level") ||
                     args.Has("keep-lm-head") || args.Has("no-accuracy-report");
  if (tuned && !format.has_value())
    return absl::InvalidArgumentError("--block, --symmetric, --accuracy-level, --keep-lm-head and --no-accuracy-report need --weights");
  ASSIGN_OR_RETURN(int64_t block, args.Int("block", w.block_size));
  if (block < 16 || block > 256 || (block & (block - 1)) != 0)
    return absl::InvalidArgumentError(absl::StrCat("--block must be 16, 32, 64, 128 or 256, got ", block));
  w.block_size = static_cast<int>(block);
  ASSIGN_OR_RETURN(int64_t level, args.Int("accuracy-level", 0));
  if (level > 4) return absl::InvalidArgumentError(absl::StrCat("--accuracy-level must be 0 to 4, got ", level));
  w.accuracy_level = static_cast<int>(level);
  w.symmetric = args.Has("symmetric");
  w.keep_output_products = args.Has("keep-lm-head");
  return w;
}

absl::StatusOr<SessionOptions> SessionOptionsFromArgs(const Args& args) {
  SessionOptions options;
  ASSIGN_OR_RETURN(int64_t threads, args.Int("threads", 0));
  if (threads > 1024) return absl::InvalidArgumentError("--threads must be at most 1024");
  options.threads = static_cast<int>(threads);
  options.fuse = !args.Has("no-fuse");
  options.verify_fusion = args.Has("verify-fusion");
  options.disabled_passes = args.Values("disable-pass");
  ASSIGN_OR_RETURN(int64_t max_mb, args.Int("max-tensor-mb", kDefaultMaxTensorBytes >> 20));
  if (max_mb == 0 || max_mb > (int64_t{1} << 40)) return absl::InvalidArgumentError("--max-tensor-mb out of range");
  options.max_tensor_bytes = max_mb << 20;
  ASSIGN_OR_RETURN(options.max_loop_iterations, args.Int("max-loop-iterations", options.max_loop_iterations));
  if (options.max_loop_iterations <= 0) return absl::InvalidArgumentError("--max-loop-iterations must be positive");
  ASSIGN_OR_RETURN(options.weights, WeightCompressionFromArgs(args));
  const std::string backend = args.Value("attention-backend").value_or("auto");
  if (backend == "auto") options.attention_backend = AttentionBackendOption::kAuto;
  else if (backend == "simd") options.attention_backend = AttentionBackendOption::kSimd;
  else if (backend == "onednn") options.attention_backend = AttentionBackendOption::kOneDnn;
  else if (backend == "reference") options.attention_backend = AttentionBackendOption::kReference;
  else
    return absl::InvalidArgumentError(
        absl::StrCat("--attention-backend must be auto, simd, onednn or reference, got ", QuoteName(backend)));
  return options;
}

absl::StatusOr<Tensor> ReadTensorFile(const std::string& path, int64_t max_bytes) {
  if (absl::EndsWith(path, ".npy")) return ReadNpyFile(path, max_bytes);
  if (absl::EndsWith(path, ".pb")) {
    ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path, max_bytes + (int64_t{1} << 20)));
    ImportOptions import_options;
    import_options.max_tensor_bytes = max_bytes;
    auto tensor = TensorFromProtoBytes(bytes, import_options);
    if (!tensor.ok()) return Annotate(tensor.status(), path);
    return tensor;
  }
  return absl::InvalidArgumentError(absl::StrCat("input file ", QuoteName(path), " must end in .npy or .pb"));
}

absl::StatusOr<NamedTensors> ReadInputs(const Args& args, int64_t max_bytes) {
  NamedTensors inputs;
  for (const std::string& spec : args.Values("input")) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      return absl::InvalidArgumentError(absl::StrCat("--input expects NAME=FILE, got ", QuoteName(spec)));
    const std::string name = spec.substr(0, eq);
    auto tensor = ReadTensorFile(spec.substr(eq + 1), max_bytes);
    if (!tensor.ok()) return Annotate(tensor.status(), absl::StrCat("input ", QuoteName(name)));
    inputs.emplace_back(name, *std::move(tensor));
  }
  return inputs;
}

std::string SanitizeFileName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (out.empty() || out == "." || out == "..") out = absl::StrCat("_", out);
  return out;
}

int ReportError(const absl::Status& status) {
  // The last line of defence for the one-line contract: whatever reached the
  // message unescaped (a name from the model) cannot break the line here.
  const std::string message = EscapeControl(std::string(status.message()));
  std::fprintf(stderr, "error: %s\n", message.c_str());
  switch (status.code()) {
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kDataLoss:
      return 1;
    default:
      return 2;
  }
}

int RunSubcommand(int argc, char** argv, const char* usage, const FlagSpec& spec,
                  const std::function<absl::Status(const Args&)>& body) {
  for (int i = 2; i < argc; ++i) {
    if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
      std::fputs(usage, stdout);
      // Only commands that open a session take (and list) its options.
      if (spec.valued.contains("threads")) std::fputs(kSessionFlagsHelp, stdout);
      return 0;
    }
  }
  try {
    auto args = Args::Parse(argc, argv, 2, spec);
    if (!args.ok()) {
      return ReportError(absl::InvalidArgumentError(
          absl::StrCat(args.status().message(), " (see 'attune ", argv[1], " --help')")));
    }
    const absl::Status status = body(*args);
    return status.ok() ? 0 : ReportError(status);
  } catch (const std::bad_alloc&) {
    return ReportError(absl::ResourceExhaustedError("out of memory"));
  } catch (const std::exception& e) {
    return ReportError(absl::InternalError(absl::StrCat("internal error: ", e.what())));
  }
}

}  // namespace attune::cli
