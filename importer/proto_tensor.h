// Internal to importer/: onnx::TensorProto <-> Tensor in every storage form.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// Where a tensor's external data may come from and how big it may be.
struct TensorSource {
  /// Folder external data is confined to; empty refuses external data.
  std::string base_dir;
  int64_t max_tensor_bytes = kDefaultMaxTensorBytes;
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
/// and the payload must match the dims exactly.
absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, std::string_view what,
                                       const TensorSource& source);

/// Writes `tensor` as raw_data under `name`.
void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

}  // namespace attune::importer
