#include "server/grpc/grpc_codec.h"

#include <cstring>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "server/datatype.h"
#include "server/tensor_codec.h"

namespace attune::server {
namespace {

using inference::InferParameter;
using inference::InferTensorContents;
using inference::ModelInferRequest;

absl::Status Bad(const std::string& message) { return absl::InvalidArgumentError(message); }

// The typed field that carries a datatype's elements ("" for FP16, BF16 and
// BYTES, which travel as raw contents only here).
const char* ContentsField(ElementType type) {
  switch (type) {
    case ElementType::kBool: return "bool_contents";
    case ElementType::kInt8:
    case ElementType::kInt16:
    case ElementType::kInt32: return "int_contents";
    case ElementType::kInt64: return "int64_contents";
    case ElementType::kUint8:
    case ElementType::kUint16:
    case ElementType::kUint32: return "uint_contents";
    case ElementType::kUint64: return "uint64_contents";
    case ElementType::kFloat32: return "fp32_contents";
    case ElementType::kFloat64: return "fp64_contents";
    default: return "";
  }
}

// The typed fields that hold elements, by name.
std::vector<std::string> FilledFields(const InferTensorContents& c) {
  std::vector<std::string> filled;
  if (c.bool_contents_size()) filled.push_back("bool_contents");
  if (c.int_contents_size()) filled.push_back("int_contents");
  if (c.int64_contents_size()) filled.push_back("int64_contents");
  if (c.uint_contents_size()) filled.push_back("uint_contents");
  if (c.uint64_contents_size()) filled.push_back("uint64_contents");
  if (c.fp32_contents_size()) filled.push_back("fp32_contents");
  if (c.fp64_contents_size()) filled.push_back("fp64_contents");
  if (c.bytes_contents_size()) filled.push_back("bytes_contents");
  return filled;
}

// The elements of one repeated field as the bytes of `To`, each checked to fit.
template <typename To, typename Field>
absl::StatusOr<std::string> Pack(const std::string& name, const Field& values, ElementType type) {
  std::string bytes(static_cast<size_t>(values.size()) * sizeof(To), '\0');
  for (int i = 0; i < values.size(); ++i) {
    const auto v = values.Get(i);
    if constexpr (std::is_integral_v<To> && !std::is_same_v<To, bool>) {
      using From = decltype(v);
      if (std::is_signed_v<From> != std::is_signed_v<To> || sizeof(From) > sizeof(To)) {
        const bool fits = std::is_signed_v<From>
                              ? static_cast<int64_t>(v) >= static_cast<int64_t>(std::numeric_limits<To>::min()) &&
                                    static_cast<int64_t>(v) <= static_cast<int64_t>(std::numeric_limits<To>::max())
                              : static_cast<uint64_t>(v) <= static_cast<uint64_t>(std::numeric_limits<To>::max());
        if (!fits)
          return Bad(absl::StrCat("input '", name, "': element ", i, " (", v, ") is not a valid ",
                                  DatatypeName(type)));
      }
    }
    const To t = static_cast<To>(v);
    std::memcpy(bytes.data() + static_cast<size_t>(i) * sizeof(To), &t, sizeof(To));
  }
  return bytes;
}

absl::StatusOr<std::string> TypedBytes(const std::string& name, const InferTensorContents& c, ElementType type) {
  switch (type) {
    case ElementType::kBool: return Pack<bool>(name, c.bool_contents(), type);
    case ElementType::kInt8: return Pack<int8_t>(name, c.int_contents(), type);
    case ElementType::kInt16: return Pack<int16_t>(name, c.int_contents(), type);
    case ElementType::kInt32: return Pack<int32_t>(name, c.int_contents(), type);
    case ElementType::kInt64: return Pack<int64_t>(name, c.int64_contents(), type);
    case ElementType::kUint8: return Pack<uint8_t>(name, c.uint_contents(), type);
    case ElementType::kUint16: return Pack<uint16_t>(name, c.uint_contents(), type);
    case ElementType::kUint32: return Pack<uint32_t>(name, c.uint_contents(), type);
    case ElementType::kUint64: return Pack<uint64_t>(name, c.uint64_contents(), type);
    case ElementType::kFloat32: return Pack<float>(name, c.fp32_contents(), type);
    case ElementType::kFloat64: return Pack<double>(name, c.fp64_contents(), type);
    default:
      return Bad(absl::StrCat("input '", name, "': ", DatatypeName(type),
                              " has no typed contents field: send it in raw_input_contents"));
  }
}

// An input's tensor from its typed contents: only its datatype's field, with
// the shape's element count.
absl::StatusOr<Tensor> TensorFromContents(const ModelInferRequest::InferInputTensor& in, ElementType type,
                                          const std::vector<int64_t>& shape, const CodecLimits& limits) {
  const std::string& name = in.name();
  const std::vector<std::string> filled = FilledFields(in.contents());
  const std::string field = ContentsField(type);
  for (const std::string& f : filled)
    if (f != field)
      return Bad(absl::StrCat("input '", name, "': contents in ", f, ", but datatype ", DatatypeName(type),
                              field.empty() ? " travels in raw_input_contents" : " takes " + field));
  auto bytes = CheckedTensorBytes(name, type, shape, limits.max_tensor_bytes);
  if (!bytes.ok()) return bytes.status();
  const int64_t expected = *bytes / static_cast<int64_t>(ElementSize(type));
  auto packed = TypedBytes(name, in.contents(), type);
  if (!packed.ok()) return packed.status();
  const int64_t given = static_cast<int64_t>(packed->size() / ElementSize(type));
  if (given != expected)
    return Bad(absl::StrCat("input '", name, "': ", field, " holds ", given, " elements, the shape ",
                            ShapeToString(shape), " has ", expected));
  return TensorFromBytes(name, *packed, type, shape, limits.max_tensor_bytes);
}

// Reads the request parameters this server knows; others are ignored, as REST ignores them.
absl::Status ReadParameters(const ModelInferRequest& message, InferRequest& request) {
  for (const auto& [key, value] : message.parameters()) {
    if (key == "binary_data_output") {
      if (value.parameter_choice_case() != InferParameter::kBoolParam)
        return Bad("parameter \"binary_data_output\" must be a bool_param");
      request.binary_output = value.bool_param();
    } else if (key == "timeout") {
      if (value.parameter_choice_case() != InferParameter::kInt64Param || value.int64_param() < 0)
        return Bad("parameter \"timeout\" must be microseconds, a non-negative int64_param");
      request.timeout_ms = value.int64_param() / 1000;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<InferRequest> ParseGrpcInferRequest(const ModelInferRequest& message,
                                                   const std::vector<TensorInfo>& model_inputs,
                                                   const std::vector<TensorInfo>& model_outputs,
                                                   const CodecLimits& limits) {
  InferRequest request;
  request.id = message.id();
  request.has_id = !message.id().empty();
  request.binary_output = true;
  if (absl::Status ok = ReadParameters(message, request); !ok.ok()) return ok;
  const bool raw = message.raw_input_contents_size() > 0;
  if (raw && message.raw_input_contents_size() != message.inputs_size())
    return Bad(absl::StrCat("raw_input_contents has ", message.raw_input_contents_size(), " entries for ",
                            message.inputs_size(), " inputs"));
  InputCollector collector(model_inputs, limits);
  for (int i = 0; i < message.inputs_size(); ++i) {
    const ModelInferRequest::InferInputTensor& in = message.inputs(i);
    const std::vector<int64_t> shape(in.shape().begin(), in.shape().end());
    auto type = collector.Check(in.name(), in.datatype(), shape);
    if (!type.ok()) return type.status();
    absl::StatusOr<Tensor> tensor;
    if (raw) {
      if (!FilledFields(in.contents()).empty())
        return Bad(absl::StrCat("input '", in.name(), "' has typed contents and raw_input_contents: give one"));
      tensor = TensorFromBytes(in.name(), message.raw_input_contents(i), *type, shape, limits.max_tensor_bytes);
    } else {
      tensor = TensorFromContents(in, *type, shape, limits);
    }
    if (!tensor.ok()) return tensor.status();
    collector.Put(*std::move(tensor));
  }
  auto inputs = collector.Take();
  if (!inputs.ok()) return inputs.status();
  request.inputs = *std::move(inputs);
  for (const auto& out : message.outputs()) {
    if (absl::Status ok = AddRequestedOutput(out.name(), request.binary_output, model_outputs, request); !ok.ok())
      return ok;
    if (out.parameters().contains("classification"))
      return Bad(absl::StrCat("output '", out.name(), "': the classification extension is not supported"));
  }
  return request;
}

namespace {

template <typename T, typename Field>
void Unpack(const Tensor& t, Field* field) {
  const T* data = t.data<T>();
  const int64_t n = t.num_elements();
  field->Reserve(static_cast<int>(n));
  for (int64_t i = 0; i < n; ++i) field->Add(data[i]);
}

void WriteContents(const Tensor& t, InferTensorContents& c) {
  switch (t.type()) {
    case ElementType::kBool: return Unpack<bool>(t, c.mutable_bool_contents());
    case ElementType::kInt8: return Unpack<int8_t>(t, c.mutable_int_contents());
    case ElementType::kInt16: return Unpack<int16_t>(t, c.mutable_int_contents());
    case ElementType::kInt32: return Unpack<int32_t>(t, c.mutable_int_contents());
    case ElementType::kInt64: return Unpack<int64_t>(t, c.mutable_int64_contents());
    case ElementType::kUint8: return Unpack<uint8_t>(t, c.mutable_uint_contents());
    case ElementType::kUint16: return Unpack<uint16_t>(t, c.mutable_uint_contents());
    case ElementType::kUint32: return Unpack<uint32_t>(t, c.mutable_uint_contents());
    case ElementType::kUint64: return Unpack<uint64_t>(t, c.mutable_uint64_contents());
    case ElementType::kFloat32: return Unpack<float>(t, c.mutable_fp32_contents());
    case ElementType::kFloat64: return Unpack<double>(t, c.mutable_fp64_contents());
    default: return;
  }
}

}  // namespace

void EncodeGrpcInferResponse(const std::string& model_name, const std::string& model_version,
                             const InferRequest& request, const NamedTensors& outputs,
                             inference::ModelInferResponse& response) {
  response.set_model_name(model_name);
  response.set_model_version(model_version);
  if (request.has_id) response.set_id(request.id);
  // The protocol allows raw or typed contents for a whole response, not a mix.
  bool raw = request.binary_output;
  for (const auto& [name, t] : outputs) raw = raw || *ContentsField(t.type()) == '\0';
  for (const auto& [name, t] : outputs) {
    auto* o = response.add_outputs();
    o->set_name(name);
    o->set_datatype(DatatypeName(t.type()));
    for (int64_t d : t.shape()) o->add_shape(d);
    if (raw) {
      const std::string_view bytes = TensorBytes(t);
      response.add_raw_output_contents(bytes.data(), bytes.size());
    } else {
      WriteContents(t, *o->mutable_contents());
    }
  }
}

}  // namespace attune::server
