#include "importer/tensor_proto.h"

#include <algorithm>
#include <climits>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "importer/proto_parse.h"
#include "importer/proto_tensor.h"
#include "onnx/onnx_pb.h"

namespace attune {

absl::StatusOr<Tensor> TensorFromProtoBytes(std::string_view bytes, const ImportOptions& options) {
  const int64_t limit = std::clamp<int64_t>(options.max_model_bytes, 0, kMaxProtobufBytes);
  if (static_cast<int64_t>(bytes.size()) > limit)
    return absl::ResourceExhaustedError(
        absl::StrCat("serialized tensor is ", bytes.size(), " bytes, above the limit of ", limit, " bytes"));
  onnx::TensorProto proto;
  if (!importer::ParseProtoWithLargeLimit(bytes, &proto))
    return absl::InvalidArgumentError("not a valid ONNX TensorProto: failed to parse protobuf");
  if (bytes.empty() || !proto.has_data_type())
    return absl::InvalidArgumentError("not a valid ONNX TensorProto: it has no data_type");
  const std::string what = proto.name().empty() ? "tensor" : absl::StrCat("tensor ", QuoteName(proto.name()));
  // A lone .pb file has no folder its external data could be confined to.
  return importer::TensorFromProto(proto, what, importer::TensorSource{"", options.max_tensor_bytes});
}

absl::StatusOr<std::string> TensorToProtoBytes(const Tensor& tensor, const std::string& name) {
  if (tensor.empty())
    return absl::InvalidArgumentError(absl::StrCat("tensor ", QuoteName(name), " is empty (no type)"));
  if (tensor.byte_size() + name.size() + 1024 > static_cast<size_t>(INT_MAX))
    return absl::ResourceExhaustedError(absl::StrCat("tensor ", QuoteName(name), " (", tensor.byte_size(),
                                                     " bytes) is too large for a 2 GB TensorProto"));
  onnx::TensorProto proto;
  importer::TensorToProto(tensor, name, &proto);
  return proto.SerializeAsString();
}

}  // namespace attune
