// Internal to importer/: onnx::TensorProto <-> Tensor in every storage form.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "importer/mapped_file.h"
#include "importer/raw_data_strip.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// Where a tensor's external data may come from and how big it may be.
struct TensorSource {
  /// Folder external data is confined to; empty refuses external data.
  std::string base_dir;
  int64_t max_tensor_bytes = kDefaultMaxTensorBytes;
  /// When set (a model loaded from a file), external data is mapped where its
  /// layout allows (ReadExternalTensor); null copies it.
  MappedFileCache* mapped_files = nullptr;
  /// The session compresses weights at load (ImportOptions).
  bool weights_compressed_at_load = false;
};

/// The raw_data of a tensor that was left out of the parsed proto
/// (StripInitializerRawData): its bytes in the mapped model file.
struct MappedRawData {
  std::shared_ptr<MappedFile> file;
  RawDataSpan span;
};

/// "float32", "string", "float8e4m3fn", ... or "code N" for an ONNX data_type code.
std::string OnnxTypeName(int32_t code);

/// The Attune element type of an ONNX data_type code: Unimplemented for ONNX
/// types Attune cannot hold (string, complex, float8, int4, ...), InvalidArgument
/// for codes ONNX does not define. `what` ("initializer 'W'") prefixes the errors.
absl::StatusOr<ElementType> ElementTypeFromOnnx(int32_t code, std::string_view what);

/// Reads raw_data (little-endian), the typed fields (float_data, int32_data,
/// int64_data, double_data, uint64_data) or external data. The element count and
/// byte size are checked for overflow and against the limit before allocating,
/// and the payload must match the dims exactly. `mapped_raw_data`, when given,
/// stands for the proto's raw_data, with the same checks and errors; a non-bool
/// tensor whose bytes start at a multiple of its element size then uses them in
/// place (MappedTensor), others get a copy.
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, std::string_view what,
                                       const TensorSource& source, const MappedRawData* mapped_raw_data = nullptr);

/// Writes `tensor` as raw_data under `name`.
void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

}  // namespace attune::importer
