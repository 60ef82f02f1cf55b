#include "importer/proto_tensor.h"

#include <bit>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"
#include "core/ir/narrow_types.h"
#include "importer/external_data.h"

namespace attune::importer {
namespace {

static_assert(std::endian::native == std::endian::little,
              "raw_data is little-endian; a big-endian host would need byte swapping");

absl::Status Invalid(std::string_view what, const std::string& detail) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": ", detail));
}

std::string Describe(ElementType type, const std::vector<int64_t>& dims) {
  return absl::StrCat(ElementTypeName(type), ShapeToString(dims));
}

// Copies one typed repeated field into the tensor, converting element by element.
template <typename Dst, typename Src, typename Convert>
void CopyField(const google::protobuf::RepeatedField<Src>& field, Tensor& tensor, Convert convert) {
  Dst* out = tensor.data<Dst>();
  for (int i = 0; i < field.size(); ++i) out[i] = convert(field.Get(i));
}

template <typename Dst, typename Src>
void CopyFieldCast(const google::protobuf::RepeatedField<Src>& field, Tensor& tensor) {
  CopyField<Dst>(field, tensor, [](Src v) { return static_cast<Dst>(v); });
}

// The typed field ONNX stores `type` in, and how many values it holds.
struct TypedField {
  const char* name;
  int size;
};

TypedField TypedFieldOf(const onnx::TensorProto& proto, ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return {"float_data", proto.float_data_size()};
    case ElementType::kFloat64: return {"double_data", proto.double_data_size()};
    case ElementType::kInt64: return {"int64_data", proto.int64_data_size()};
    case ElementType::kUint32: case ElementType::kUint64: return {"uint64_data", proto.uint64_data_size()};
    default: return {"int32_data", proto.int32_data_size()};
  }
}

void CopyTypedField(const onnx::TensorProto& proto, Tensor& tensor) {
  switch (tensor.type()) {
    case ElementType::kFloat32: CopyFieldCast<float>(proto.float_data(), tensor); break;
    case ElementType::kFloat64: CopyFieldCast<double>(proto.double_data(), tensor); break;
    case ElementType::kInt64: CopyFieldCast<int64_t>(proto.int64_data(), tensor); break;
    case ElementType::kUint32: CopyFieldCast<uint32_t>(proto.uint64_data(), tensor); break;
    case ElementType::kUint64: CopyFieldCast<uint64_t>(proto.uint64_data(), tensor); break;
    case ElementType::kInt32: CopyFieldCast<int32_t>(proto.int32_data(), tensor); break;
    case ElementType::kInt16: CopyFieldCast<int16_t>(proto.int32_data(), tensor); break;
    case ElementType::kInt8: CopyFieldCast<int8_t>(proto.int32_data(), tensor); break;
    case ElementType::kUint16: CopyFieldCast<uint16_t>(proto.int32_data(), tensor); break;
    case ElementType::kUint8: CopyFieldCast<uint8_t>(proto.int32_data(), tensor); break;
    case ElementType::kBool:
      CopyField<uint8_t>(proto.int32_data(), tensor, [](int32_t v) { return static_cast<uint8_t>(v != 0); });
      break;
    case ElementType::kFloat16:
      // int32_data holds the 16-bit pattern of each half in its low bits.
      CopyField<Float16>(proto.int32_data(), tensor, [](int32_t v) { return Float16{static_cast<uint16_t>(v)}; });
      break;
    case ElementType::kBFloat16:
      CopyField<BFloat16>(proto.int32_data(), tensor, [](int32_t v) { return BFloat16{static_cast<uint16_t>(v)}; });
      break;
    default:
      // The float8 types: int32_data holds each element's bit pattern.
      if (IsNarrowType(tensor.type()))
        CopyField<uint8_t>(proto.int32_data(), tensor, [](int32_t v) { return static_cast<uint8_t>(v); });
      break;
  }
}

absl::StatusOr<Tensor> Allocate(ElementType type, std::vector<int64_t> dims, std::string_view what,
                                const TensorSource& source) {
  auto tensor = Tensor::Create(type, std::move(dims), source.max_tensor_bytes);
  if (!tensor.ok()) return absl::Status(tensor.status().code(), absl::StrCat(Sv(what), ": ", tensor.status().message()));
  return tensor;
}

// The 4- and 2-bit types: files pack them (raw_data bytes, or one byte per
// int32_data value); the tensor holds one element per byte.
absl::StatusOr<Tensor> ReadPacked(const onnx::TensorProto& proto, std::string_view raw, bool has_raw_data,
                                  ElementType type, std::vector<int64_t> dims, int64_t count, std::string_view what,
                                  const TensorSource& source) {
  const int64_t packed_size = (count + ElementsPerFileByte(type) - 1) / ElementsPerFileByte(type);
  std::string bytes;
  if (has_raw_data) {
    bytes.assign(raw);
  } else {
    for (int32_t v : proto.int32_data()) bytes.push_back(static_cast<char>(v));
  }
  if (static_cast<int64_t>(bytes.size()) != packed_size)
    return Invalid(what, absl::StrCat(has_raw_data ? "raw_data" : "int32_data", " holds ", bytes.size(),
                                      " packed bytes but ", Describe(type, dims), " needs ", packed_size));
  auto tensor = Allocate(type, std::move(dims), what, source);
  if (!tensor.ok()) return tensor.status();
  UnpackNarrow(type, reinterpret_cast<const uint8_t*>(bytes.data()), count, tensor->data<uint8_t>());
  return tensor;
}

absl::StatusOr<Tensor> ReadExternal(const onnx::TensorProto& proto, bool has_raw_data, ElementType type,
                                    std::vector<int64_t> dims, std::string_view what, const TensorSource& source) {
  if (has_raw_data || TypedFieldOf(proto, type).size > 0)
    return Invalid(what, "has data_location EXTERNAL but also holds inline data");
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& entry : proto.external_data()) entries.emplace_back(entry.key(), entry.value());
  auto ref = ParseExternalDataRef(entries, what);
  if (!ref.ok()) return ref.status();
  return ReadExternalTensor(*ref, source.base_dir, type, std::move(dims), source.max_tensor_bytes, what,
                            source.mapped_files);
}

}  // namespace

std::string OnnxTypeName(int32_t code) {
  if (code == 14) return "complex64";
  if (code == 15) return "complex128";
  // ElementTypeName knows every other code up to 26, the narrow types included.
  std::string name = ElementTypeName(static_cast<ElementType>(code));
  if (name != "undefined") return name;
  return absl::StrCat("code ", code);
}

absl::StatusOr<ElementType> ElementTypeFromOnnx(int32_t code, std::string_view what) {
  if (IsSupportedElementType(code)) return static_cast<ElementType>(code);
  if (code == 0) return Invalid(what, "has no element type (data_type 0, UNDEFINED)");
  if (code == 8 || (code >= 14 && code <= 26 && code != 16))
    return absl::UnimplementedError(
        absl::StrCat(Sv(what), ": element type ", OnnxTypeName(code), " is not supported by Attune"));
  return Invalid(what, absl::StrCat("has an unknown element type (data_type ", code, ")"));
}

absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& proto, std::string_view what,
                                       const TensorSource& source, const MappedRawData* mapped_raw_data) {
  auto type = ElementTypeFromOnnx(proto.data_type(), what);
  if (!type.ok()) return type.status();
  if (proto.has_segment()) return absl::UnimplementedError(absl::StrCat(Sv(what), ": segmented tensors are not supported"));

  std::vector<int64_t> dims(proto.dims().begin(), proto.dims().end());
  auto count = CheckedElementCount(dims);
  if (!count.ok()) return Invalid(what, std::string(count.status().message()));
  const int64_t element_size = static_cast<int64_t>(ElementSize(*type));
  if (*count > source.max_tensor_bytes / element_size)
    return absl::ResourceExhaustedError(absl::StrCat(Sv(what), ": ", Describe(*type, dims),
                                                     " is larger than the tensor size limit of ",
                                                     source.max_tensor_bytes, " bytes"));
  const int64_t byte_size = *count * element_size;

  const bool has_raw_data = proto.has_raw_data() || mapped_raw_data != nullptr;
  const bool packed = ElementsPerFileByte(*type) > 1;
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    if (packed)
      return absl::UnimplementedError(absl::StrCat(Sv(what), ": external data of element type ",
                                                   ElementTypeName(*type), " is not supported"));
    return ReadExternal(proto, has_raw_data, *type, std::move(dims), what, source);
  }
  if (packed) {
    const std::string_view raw =
        mapped_raw_data == nullptr
            ? std::string_view(proto.raw_data())
            : std::string_view(mapped_raw_data->file->data() + mapped_raw_data->span.offset,
                               static_cast<size_t>(mapped_raw_data->span.size));
    return ReadPacked(proto, raw, has_raw_data, *type, std::move(dims), *count, what, source);
  }

  if (has_raw_data) {
    const std::string_view raw =
        mapped_raw_data == nullptr
            ? std::string_view(proto.raw_data())
            : std::string_view(mapped_raw_data->file->data() + mapped_raw_data->span.offset,
                               static_cast<size_t>(mapped_raw_data->span.size));
    if (static_cast<int64_t>(raw.size()) != byte_size)
      return Invalid(what, absl::StrCat("raw_data holds ", raw.size(), " bytes but ", Describe(*type, dims),
                                        " needs ", byte_size));
    // Bools are copied: their bytes are rewritten to 0 and 1 below.
    if (mapped_raw_data != nullptr && *type != ElementType::kBool && mapped_raw_data->span.offset % element_size == 0)
      return MappedTensor(mapped_raw_data->file, mapped_raw_data->span.offset, *type, std::move(dims));
    auto tensor = Allocate(*type, std::move(dims), what, source);
    if (!tensor.ok()) return tensor.status();
    if (byte_size > 0) std::memcpy(tensor->raw_data(), raw.data(), raw.size());
    if (*type == ElementType::kBool) {
      for (uint8_t& b : tensor->values<uint8_t>()) b = b != 0;
    }
    // The copy is the one kept; the file's pages it was read from need not stay.
    if (mapped_raw_data != nullptr)
      mapped_raw_data->file->DropCopied(mapped_raw_data->span.offset, mapped_raw_data->span.size);
    return tensor;
  }

  const TypedField field = TypedFieldOf(proto, *type);
  if (field.size != *count)
    return Invalid(what, absl::StrCat(field.name, " holds ", field.size, " values but ", Describe(*type, dims),
                                      " needs ", *count));
  auto tensor = Allocate(*type, std::move(dims), what, source);
  if (!tensor.ok()) return tensor.status();
  CopyTypedField(proto, *tensor);
  return tensor;
}

void TensorToProto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(static_cast<int32_t>(tensor.type()));
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  if (ElementsPerFileByte(tensor.type()) > 1) {
    proto->set_raw_data(PackNarrow(tensor.type(), tensor.data<uint8_t>(), tensor.num_elements()));
    return;
  }
  proto->set_raw_data(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
}

}  // namespace attune::importer
