#include "tests/common/onnx_test_case.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "onnx/onnx_pb.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

template <typename Message>
absl::Status ParseFile(const std::string& path, Message& message) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  if (!message.ParseFromIstream(&in)) return absl::InvalidArgumentError(absl::StrCat("cannot parse ", path));
  return absl::OkStatus();
}

// Copies the typed repeated field of a TensorProto into `t`, element by element.
template <typename Dst, typename Field>
void CopyField(const Field& field, Tensor& t) {
  Dst* out = t.data<Dst>();
  for (int64_t i = 0; i < t.num_elements(); ++i) out[i] = static_cast<Dst>(field[static_cast<int>(i)]);
}

absl::StatusOr<Tensor> FromProto(const onnx::TensorProto& proto) {
  if (!IsSupportedElementType(proto.data_type())) {
    return absl::UnimplementedError(absl::StrCat("tensor ", proto.name(), ": unsupported type ", proto.data_type()));
  }
  const auto type = static_cast<ElementType>(proto.data_type());
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type, shape));
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != t.byte_size()) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", proto.name(), ": raw_data has the wrong size"));
    }
    if (t.byte_size() > 0) std::memcpy(t.raw_data(), proto.raw_data().data(), t.byte_size());
    return t;
  }
  auto count_is = [&](int n) { return n == t.num_elements(); };
  switch (type) {
    case ElementType::kFloat32:
      if (!count_is(proto.float_data_size())) break;
      CopyField<float>(proto.float_data(), t);
      return t;
    case ElementType::kFloat64:
      if (!count_is(proto.double_data_size())) break;
      CopyField<double>(proto.double_data(), t);
      return t;
    case ElementType::kInt64:
      if (!count_is(proto.int64_data_size())) break;
      CopyField<int64_t>(proto.int64_data(), t);
      return t;
    case ElementType::kUint32:
    case ElementType::kUint64:
      if (!count_is(proto.uint64_data_size())) break;
      if (type == ElementType::kUint32)
        CopyField<uint32_t>(proto.uint64_data(), t);
      else
        CopyField<uint64_t>(proto.uint64_data(), t);
      return t;
    default: {  // int32_data holds every narrower type, 16-bit floats as their bits
      if (!count_is(proto.int32_data_size())) break;
      const size_t size = ElementSize(type);
      auto* out = static_cast<unsigned char*>(t.raw_data());
      for (int64_t i = 0; i < t.num_elements(); ++i) {
        const int32_t v = proto.int32_data(static_cast<int>(i));
        if (size == 1)
          out[i] = static_cast<unsigned char>(v);
        else if (size == 2) {
          const uint16_t b = static_cast<uint16_t>(v);
          std::memcpy(out + 2 * i, &b, 2);
        } else
          std::memcpy(out + 4 * i, &v, 4);
      }
      return t;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("tensor ", proto.name(), ": data does not match its shape"));
}

absl::StatusOr<AttributeValue> FromProto(const onnx::AttributeProto& a) {
  switch (a.type()) {
    case onnx::AttributeProto::INT:
      return AttributeValue(static_cast<int64_t>(a.i()));
    case onnx::AttributeProto::FLOAT:
      return AttributeValue(a.f());
    case onnx::AttributeProto::STRING:
      return AttributeValue(a.s());
    case onnx::AttributeProto::INTS:
      return AttributeValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case onnx::AttributeProto::FLOATS:
      return AttributeValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case onnx::AttributeProto::STRINGS:
      return AttributeValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case onnx::AttributeProto::TENSOR: {
      ASSIGN_OR_RETURN(Tensor t, FromProto(a.t()));
      return AttributeValue(std::move(t));
    }
    default:
      return absl::UnimplementedError(absl::StrCat("attribute ", a.name(), ": unsupported type"));
  }
}

// The .pb files of one kind ("input" / "output"), keyed by tensor name; a
// file whose tensor has no name takes the graph's name at its position.
absl::StatusOr<std::map<std::string, Tensor>> LoadDataSet(
    const fs::path& dir, const char* kind,
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& graph_values) {
  std::map<std::string, Tensor> tensors;
  for (int n = 0;; ++n) {
    const fs::path file = dir / absl::StrCat(kind, "_", n, ".pb");
    if (!fs::exists(file)) break;
    onnx::TensorProto proto;
    RETURN_IF_ERROR(ParseFile(file.string(), proto));
    std::string name = proto.name();
    if (name.empty() && n < graph_values.size()) name = graph_values[n].name();
    ASSIGN_OR_RETURN(Tensor t, FromProto(proto));
    tensors[name] = std::move(t);
  }
  return tensors;
}

}  // namespace

std::string BackendTestRoot() { return BackendNodeDir(); }

std::vector<std::string> ListBackendTests(const std::string& prefix) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(BackendTestRoot(), ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.rfind(prefix, 0) == 0) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

absl::StatusOr<Tensor> LoadTensorProtoFile(const std::string& path) {
  onnx::TensorProto proto;
  RETURN_IF_ERROR(ParseFile(path, proto));
  return FromProto(proto);
}

absl::StatusOr<BackendTestCase> LoadBackendTestCase(const std::string& name_or_path) {
  fs::path dir = name_or_path;
  if (!fs::exists(dir / "model.onnx")) dir = fs::path(BackendTestRoot()) / name_or_path;
  onnx::ModelProto model;
  RETURN_IF_ERROR(ParseFile((dir / "model.onnx").string(), model));
  const onnx::GraphProto& graph = model.graph();
  if (graph.node_size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(dir.string(), ": expected one node, found ", graph.node_size()));
  }
  const onnx::NodeProto& node = graph.node(0);

  BackendTestCase test;
  test.name = dir.filename().string();
  test.call.op_type = node.op_type();
  test.call.domain = node.domain() == "ai.onnx" ? "" : node.domain();
  test.call.opset = 0;
  for (const auto& import : model.opset_import()) {
    const std::string domain = import.domain() == "ai.onnx" ? "" : import.domain();
    if (domain == test.call.domain) test.call.opset = static_cast<int>(import.version());
  }
  for (const auto& a : node.attribute()) {
    ASSIGN_OR_RETURN(AttributeValue value, FromProto(a));
    test.call.attributes.Set(a.name(), std::move(value));
  }

  const fs::path data = dir / "test_data_set_0";
  ASSIGN_OR_RETURN(auto inputs, LoadDataSet(data, "input", graph.input()));
  ASSIGN_OR_RETURN(auto outputs, LoadDataSet(data, "output", graph.output()));
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      test.call.inputs.emplace_back();
      continue;
    }
    auto it = inputs.find(name);
    if (it == inputs.end()) return absl::NotFoundError(absl::StrCat(test.name, ": no data for input ", name));
    test.call.inputs.push_back(it->second);
  }
  test.call.num_outputs = node.output_size();
  for (const std::string& name : node.output()) {
    auto it = name.empty() ? outputs.end() : outputs.find(name);
    test.expected.push_back(it == outputs.end() ? Tensor() : it->second);
  }
  return test;
}

}  // namespace attune::testing
