#include "tests/common/onnx_pb_loader.h"

#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::testing {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Copies a repeated proto field into the tensor, converting each value to the
// element type (int32_data holds 8/16-bit ints, bool and the half types' bits).
template <typename Dst, typename Field>
absl::Status CopyField(const Field& field, Tensor& t) {
  if (field.size() != t.num_elements())
    return absl::InvalidArgumentError(absl::StrCat("TensorProto has ", field.size(), " values for ",
                                                   t.num_elements(), " elements"));
  Dst* out = static_cast<Dst*>(t.raw_data());
  for (int i = 0; i < field.size(); ++i) {
    if constexpr (std::is_same_v<Dst, Float16> || std::is_same_v<Dst, BFloat16>)
      out[i].bits = static_cast<uint16_t>(field.Get(i));
    else
      out[i] = static_cast<Dst>(field.Get(i));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto) {
  if (!IsSupportedElementType(proto.data_type()))
    return absl::UnimplementedError(absl::StrCat("TensorProto data type ", proto.data_type(), " is not supported"));
  if (proto.data_location() == onnx::TensorProto::EXTERNAL)
    return absl::UnimplementedError("TensorProto with external data");
  const auto type = static_cast<ElementType>(proto.data_type());
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type, shape));
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != t.byte_size())
      return absl::InvalidArgumentError(absl::StrCat("TensorProto raw_data has ", proto.raw_data().size(),
                                                     " bytes, expected ", t.byte_size()));
    std::memcpy(t.raw_data(), proto.raw_data().data(), t.byte_size());  // little-endian host
    return t;
  }
  absl::Status status;
  switch (type) {
    case ElementType::kFloat32: status = CopyField<float>(proto.float_data(), t); break;
    case ElementType::kFloat64: status = CopyField<double>(proto.double_data(), t); break;
    case ElementType::kInt64: status = CopyField<int64_t>(proto.int64_data(), t); break;
    case ElementType::kInt32: status = CopyField<int32_t>(proto.int32_data(), t); break;
    case ElementType::kInt16: status = CopyField<int16_t>(proto.int32_data(), t); break;
    case ElementType::kInt8: status = CopyField<int8_t>(proto.int32_data(), t); break;
    case ElementType::kUint16: status = CopyField<uint16_t>(proto.int32_data(), t); break;
    case ElementType::kUint8: status = CopyField<uint8_t>(proto.int32_data(), t); break;
    case ElementType::kBool: status = CopyField<uint8_t>(proto.int32_data(), t); break;
    case ElementType::kFloat16: status = CopyField<Float16>(proto.int32_data(), t); break;
    case ElementType::kBFloat16: status = CopyField<BFloat16>(proto.int32_data(), t); break;
    case ElementType::kUint32: status = CopyField<uint32_t>(proto.uint64_data(), t); break;
    case ElementType::kUint64: status = CopyField<uint64_t>(proto.uint64_data(), t); break;
    default: return absl::UnimplementedError(absl::StrCat("TensorProto of ", ElementTypeName(type)));
  }
  if (!status.ok()) return status;
  return t;
}

absl::StatusOr<Tensor> LoadTensorFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  onnx::TensorProto proto;
  if (!proto.ParseFromString(bytes)) return absl::InvalidArgumentError(absl::StrCat(path, " is not a TensorProto"));
  auto tensor = TensorFromProto(proto);
  if (!tensor.ok()) return Annotate(tensor.status(), path);
  return tensor;
}

absl::StatusOr<onnx::ModelProto> LoadModelFile(const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return absl::InvalidArgumentError(absl::StrCat(path, " is not a ModelProto"));
  return model;
}

absl::StatusOr<Attributes> AttributesFromNode(const onnx::NodeProto& node) {
  Attributes attrs;
  for (const onnx::AttributeProto& a : node.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: attrs.Set(a.name(), static_cast<int64_t>(a.i())); break;
      case onnx::AttributeProto::FLOAT: attrs.Set(a.name(), a.f()); break;
      case onnx::AttributeProto::STRING: attrs.Set(a.name(), a.s()); break;
      case onnx::AttributeProto::INTS:
        attrs.Set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end()));
        break;
      case onnx::AttributeProto::FLOATS:
        attrs.Set(a.name(), std::vector<float>(a.floats().begin(), a.floats().end()));
        break;
      case onnx::AttributeProto::STRINGS:
        attrs.Set(a.name(), std::vector<std::string>(a.strings().begin(), a.strings().end()));
        break;
      case onnx::AttributeProto::TENSOR: {
        ASSIGN_OR_RETURN(Tensor t, TensorFromProto(a.t()));
        attrs.Set(a.name(), std::move(t));
        break;
      }
      default:
        return absl::UnimplementedError(absl::StrCat("attribute ", a.name(), " of type ", a.type()));
    }
  }
  return attrs;
}

}  // namespace attune::testing
