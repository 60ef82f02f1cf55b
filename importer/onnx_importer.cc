#include "importer/onnx_importer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "importer/function_inliner.h"
#include "importer/torch_repeat_interleave.h"
#include "importer/graph_reader.h"
#include "importer/mapped_file.h"
#include "importer/proto_parse.h"
#include "importer/proto_tensor.h"
#include "importer/raw_data_strip.h"
#include "onnx/onnx_pb.h"

namespace attune {
namespace {

constexpr char kNotOnnx[] = "not a valid ONNX model: failed to parse protobuf";

int64_t ModelByteLimit(const ImportOptions& options) {
  return std::clamp<int64_t>(options.max_model_bytes, 0, kMaxProtobufBytes);
}

absl::Status TooBig(int64_t size, const ImportOptions& options) {
  return absl::ResourceExhaustedError(absl::StrCat("model is ", size, " bytes, above the limit of ",
                                                   ModelByteLimit(options), " bytes (protobuf cannot exceed 2 GB; ",
                                                   "keep large weights as external data)"));
}

absl::Status TooNew(const std::string& what) {
  return absl::UnimplementedError(absl::StrCat("the model uses ", what, "; Attune supports IR versions up to ",
                                               kNewestIrVersion, " and ai.onnx opsets up to ", kNewestDefaultOpset));
}

absl::Status ReadModelInfo(const onnx::ModelProto& model, Graph* graph) {
  graph->producer_name = model.producer_name();
  graph->producer_version = model.producer_version();
  graph->ir_version = model.ir_version();
  for (const auto& entry : model.metadata_props()) graph->metadata[entry.key()] = entry.value();
  for (const auto& opset : model.opset_import()) {
    const std::string& domain = opset.domain();
    if (opset.version() <= 0 || opset.version() > INT32_MAX)
      return absl::InvalidArgumentError(
          absl::StrCat("opset_import of domain ", QuoteName(domain), " has an invalid version ", opset.version()));
    const int previous = graph->OpsetFor(domain);
    if (previous != 0 && previous != opset.version())
      return absl::InvalidArgumentError(absl::StrCat("opset_import lists domain ", QuoteName(domain),
                                                     " twice (versions ", previous, " and ", opset.version(), ")"));
    graph->SetOpset(domain, static_cast<int>(opset.version()));
  }
  if (graph->OpsetFor("") > kNewestDefaultOpset) return TooNew(absl::StrCat("ai.onnx opset ", graph->OpsetFor("")));
  return absl::OkStatus();
}

// Parses the mapped model file with its initializers' raw_data left out, which
// `left_out` then locates, where the wire format allows; otherwise parses it
// whole, as protobuf would the stream.
bool ParseMappedModel(const importer::MappedFile& file, onnx::ModelProto* model, importer::LeftOutRawData* left_out) {
  const std::string_view bytes(file.data(), static_cast<size_t>(file.size()));
  if (std::optional<importer::StrippedModel> stripped = importer::StripInitializerRawData(bytes)) {
    if (importer::ParseProtoWithLargeLimit(stripped->bytes, model) &&
        static_cast<size_t>(model->graph().initializer_size()) == stripped->raw_data.size()) {
      left_out->spans = std::move(stripped->raw_data);
      return true;
    }
    // Not expected after a sound scan; protobuf's verdict on the whole file decides.
    model->Clear();
  }
  return importer::ParseProtoWithLargeLimit(bytes, model);
}

absl::StatusOr<std::unique_ptr<Graph>> ImportParsedModel(onnx::ModelProto& model, const std::string& base_dir,
                                                         const ImportOptions& options,
                                                         const importer::LeftOutRawData* left_out = nullptr,
                                                         importer::MappedFileCache* mapped_files = nullptr) {
  if (!model.has_graph()) return absl::InvalidArgumentError("not a valid ONNX model: it has no graph");
  if (model.ir_version() <= 0) return absl::InvalidArgumentError("not a valid ONNX model: ir_version is missing");
  if (model.ir_version() > kNewestIrVersion) return TooNew(absl::StrCat("IR version ", model.ir_version()));
  RETURN_IF_ERROR(importer::InlineModelFunctions(&model));
  auto graph = std::make_unique<Graph>();
  RETURN_IF_ERROR(ReadModelInfo(model, graph.get()));
  const int initializers = model.graph().initializer_size();
  RETURN_IF_ERROR(importer::RewriteTorchRepeatInterleave(model.mutable_graph(), graph->OpsetFor("")).status());
  importer::LeftOutRawData with_rewrite;
  if (left_out != nullptr && model.graph().initializer_size() > initializers) {
    with_rewrite = *left_out;  // the rewrite's own constants come after the file's, with no span
    with_rewrite.spans.resize(model.graph().initializer_size());
    left_out = &with_rewrite;
  }
  importer::TensorSource source{base_dir, options.max_tensor_bytes, mapped_files, options.weights_compressed_at_load};
  RETURN_IF_ERROR(importer::ReadGraph(model.mutable_graph(), source, graph.get(), left_out));
  return graph;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> ImportModelFromBytes(std::string_view bytes, const std::string& base_dir,
                                                            const ImportOptions& options) {
  if (static_cast<int64_t>(bytes.size()) > ModelByteLimit(options)) return TooBig(bytes.size(), options);
  if (bytes.empty()) return absl::InvalidArgumentError(absl::StrCat(kNotOnnx, " (the input is empty)"));
  onnx::ModelProto model;
  if (!importer::ParseProtoWithLargeLimit(bytes, &model)) return absl::InvalidArgumentError(kNotOnnx);
  return ImportParsedModel(model, base_dir, options);
}

absl::StatusOr<std::unique_ptr<Graph>> ImportModelFromFile(const std::string& path, const ImportOptions& options) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    const std::string message = absl::StrCat("cannot open model file ", QuoteName(path), ": ", std::strerror(errno));
    return errno == ENOENT ? absl::NotFoundError(message) : absl::InvalidArgumentError(message);
  }
  struct stat info {};
  onnx::ModelProto model;
  importer::LeftOutRawData left_out;
  absl::Status status;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    status = absl::InvalidArgumentError(absl::StrCat("model file ", QuoteName(path), " is not a regular file"));
  } else if (info.st_size > ModelByteLimit(options)) {
    status = TooBig(info.st_size, options);
  } else if (info.st_size == 0) {
    status = absl::InvalidArgumentError(absl::StrCat(kNotOnnx, " (the file ", QuoteName(path), " is empty)"));
  } else {
    // Mapped, initializers stored raw use the file's bytes in place; a file
    // the system will not map is streamed and copied as before.
    left_out.file = importer::MappedFile::Map(fd, info.st_size);
    const bool parsed = left_out.file != nullptr ? ParseMappedModel(*left_out.file, &model, &left_out)
                                                 : importer::ParseProtoFromFileWithLargeLimit(fd, &model);
    if (!parsed) status = absl::InvalidArgumentError(absl::StrCat(kNotOnnx, " (file ", QuoteName(path), ")"));
  }
  ::close(fd);
  RETURN_IF_ERROR(status);
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  importer::MappedFileCache external_files;
  return ImportParsedModel(model, folder.empty() ? std::filesystem::path(".").string() : folder.string(), options,
                           left_out.spans.empty() ? nullptr : &left_out, &external_files);
}

}  // namespace attune
