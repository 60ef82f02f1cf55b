// Test helpers: ONNX models built with the protobuf API, temp folders, .npy reading.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "core/ir/graph.h"
#include "gtest/gtest.h"
#include "importer/onnx_importer.h"
#include "onnx/onnx_pb.h"

namespace attune::testing {

/// Success when `status` has `code` and its message contains every one of `parts`;
/// the message must also be one line.
inline ::testing::AssertionResult HasError(const absl::Status& status, absl::StatusCode code,
                                           const std::vector<std::string>& parts) {
  if (status.code() != code)
    return ::testing::AssertionFailure() << "expected code " << absl::StatusCodeToString(code) << ", got "
                                         << status.ToString();
  const std::string message(status.message());
  for (const std::string& part : parts)
    if (message.find(part) == std::string::npos)
      return ::testing::AssertionFailure() << "message lacks \"" << part << "\": " << message;
  if (message.find('\n') != std::string::npos)
    return ::testing::AssertionFailure() << "message spans several lines: " << message;
  return ::testing::AssertionSuccess();
}

/// A model with one graph, IR version 8 and the given default-domain opset.
inline onnx::ModelProto MinimalModel(int64_t opset = 17) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("test");
  model.mutable_graph()->set_name("g");
  auto* op = model.add_opset_import();
  op->set_domain("");
  op->set_version(opset);
  return model;
}

using DimSpec = std::variant<int64_t, std::string>;

inline void SetTensorType(onnx::ValueInfoProto* info, const std::string& name, int32_t elem_type,
                          const std::vector<DimSpec>& dims) {
  info->set_name(name);
  auto* tensor = info->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  auto* shape = tensor->mutable_shape();
  for (const DimSpec& d : dims) {
    auto* dim = shape->add_dim();
    if (const int64_t* v = std::get_if<int64_t>(&d)) {
      if (*v >= 0) dim->set_dim_value(*v);  // negative: leave the dim unknown
    } else {
      dim->set_dim_param(std::get<std::string>(d));
    }
  }
}

inline void AddInput(onnx::ModelProto& m, const std::string& name, int32_t elem_type = 1,
                     const std::vector<DimSpec>& dims = {}) {
  SetTensorType(m.mutable_graph()->add_input(), name, elem_type, dims);
}

inline void AddOutput(onnx::ModelProto& m, const std::string& name, int32_t elem_type = 1,
                      const std::vector<DimSpec>& dims = {}) {
  SetTensorType(m.mutable_graph()->add_output(), name, elem_type, dims);
}

inline onnx::NodeProto* AddNode(onnx::ModelProto& m, const std::string& op, const std::vector<std::string>& inputs,
                                const std::vector<std::string>& outputs, const std::string& name = "") {
  auto* node = m.mutable_graph()->add_node();
  node->set_op_type(op);
  if (!name.empty()) node->set_name(name);
  for (const auto& s : inputs) node->add_input(s);
  for (const auto& s : outputs) node->add_output(s);
  return node;
}

inline onnx::TensorProto* AddInitializer(onnx::ModelProto& m, const std::string& name, int32_t data_type,
                                         const std::vector<int64_t>& dims) {
  auto* t = m.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(data_type);
  for (int64_t d : dims) t->add_dims(d);
  return t;
}

template <typename T>
std::string RawBytes(const std::vector<T>& values) {
  return std::string(reinterpret_cast<const char*>(values.data()), values.size() * sizeof(T));
}

inline onnx::AttributeProto* AddAttribute(onnx::NodeProto* node, const std::string& name,
                                          onnx::AttributeProto::AttributeType type) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

inline std::string Serialize(const onnx::ModelProto& m) { return m.SerializeAsString(); }

inline absl::StatusOr<std::unique_ptr<Graph>> Import(const onnx::ModelProto& m, const std::string& base_dir = "",
                                                     const ImportOptions& options = {}) {
  return ImportModelFromBytes(Serialize(m), base_dir, options);
}

/// A fresh folder under the system temp dir, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "attune_importer_XXXXXX").string();
    char* made = ::mkdtemp(pattern.data());
    path_ = made ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// A float32 little-endian C-order .npy file (the format the model generators write).
struct NpyFloat {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

inline NpyFloat ReadNpyFloat32(const std::string& path) {
  const std::string bytes = ReadFile(path);
  NpyFloat out;
  if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) return out;
  const int major = static_cast<unsigned char>(bytes[6]);
  const size_t header_len = major == 1 ? static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8)
                                       : *reinterpret_cast<const uint32_t*>(&bytes[8]);
  const size_t header_start = major == 1 ? 10 : 12;
  const std::string header = bytes.substr(header_start, header_len);
  if (header.find("'<f4'") == std::string::npos || header.find("'fortran_order': False") == std::string::npos)
    return out;
  const size_t open = header.find('(', header.find("'shape'"));
  const size_t close = header.find(')', open);
  std::stringstream dims(header.substr(open + 1, close - open - 1));
  std::string item;
  while (std::getline(dims, item, ','))
    if (item.find_first_not_of(' ') != std::string::npos) out.shape.push_back(std::stoll(item));
  const size_t data_start = header_start + header_len;
  out.values.resize((bytes.size() - data_start) / sizeof(float));
  std::memcpy(out.values.data(), bytes.data() + data_start, out.values.size() * sizeof(float));
  return out;
}

}  // namespace attune::testing
