// A small, self-contained reader of single-node ONNX backend tests
// (model.onnx + test_data_set_0/{input,output}_N.pb) for op tests. Kept local to
// tests/ops so these tests do not depend on the importer.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "onnx/onnx_pb.h"

namespace attune::testing {

struct BackendNodeCase {
  std::string op_type;
  int opset = 0;
  Attributes attributes;
  std::vector<Tensor> inputs;  // empty Tensor = omitted input
  std::vector<Tensor> expected;
};

template <typename Proto>
absl::Status ReadProto(const std::string& path, Proto* proto) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  if (!proto->ParseFromIstream(&in)) return absl::InvalidArgumentError(absl::StrCat("cannot parse ", path));
  return absl::OkStatus();
}

template <typename T, typename Field>
void CopyField(const Field& field, Tensor& t) {
  T* out = t.data<T>();
  for (int i = 0; i < field.size() && i < t.num_elements(); ++i) out[i] = static_cast<T>(field.Get(i));
}

inline absl::StatusOr<Tensor> TensorFromProto(const onnx::TensorProto& p) {
  std::vector<int64_t> shape(p.dims().begin(), p.dims().end());
  const auto type = static_cast<ElementType>(p.data_type());
  auto t = Tensor::Create(type, shape);
  if (!t.ok()) return t.status();
  if (p.has_raw_data()) {
    if (p.raw_data().size() != t->byte_size()) return absl::InvalidArgumentError("raw_data size mismatch");
    std::copy(p.raw_data().begin(), p.raw_data().end(), static_cast<char*>(t->raw_data()));
    return t;
  }
  switch (type) {
    case ElementType::kFloat32: CopyField<float>(p.float_data(), *t); break;
    case ElementType::kFloat64: CopyField<double>(p.double_data(), *t); break;
    case ElementType::kInt64: CopyField<int64_t>(p.int64_data(), *t); break;
    case ElementType::kUint64: case ElementType::kUint32: CopyField<uint64_t>(p.uint64_data(), *t); break;
    case ElementType::kInt32: CopyField<int32_t>(p.int32_data(), *t); break;
    case ElementType::kInt16: CopyField<int16_t>(p.int32_data(), *t); break;
    case ElementType::kUint16: case ElementType::kFloat16: case ElementType::kBFloat16:
      CopyField<uint16_t>(p.int32_data(), *t); break;
    case ElementType::kInt8: CopyField<int8_t>(p.int32_data(), *t); break;
    case ElementType::kUint8: CopyField<uint8_t>(p.int32_data(), *t); break;
    case ElementType::kBool: CopyField<bool>(p.int32_data(), *t); break;
    default: return absl::UnimplementedError("unsupported tensor type");
  }
  return t;
}

inline absl::StatusOr<Attributes> AttributesFromProto(const onnx::NodeProto& node) {
  Attributes attrs;
  for (const auto& a : node.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: attrs.Set(a.name(), static_cast<int64_t>(a.i())); break;
      case onnx::AttributeProto::FLOAT: attrs.Set(a.name(), a.f()); break;
      case onnx::AttributeProto::STRING: attrs.Set(a.name(), a.s()); break;
      case onnx::AttributeProto::INTS: attrs.Set(a.name(), std::vector<int64_t>(a.ints().begin(), a.ints().end())); break;
      case onnx::AttributeProto::FLOATS: attrs.Set(a.name(), std::vector<float>(a.floats().begin(), a.floats().end())); break;
      case onnx::AttributeProto::TENSOR: {
        auto t = TensorFromProto(a.t());
        if (!t.ok()) return t.status();
        attrs.Set(a.name(), *std::move(t));
        break;
      }
      default: return absl::UnimplementedError(absl::StrCat("attribute type of ", a.name()));
    }
  }
  return attrs;
}

/// Loads a backend test folder whose graph is a single node.
inline absl::StatusOr<BackendNodeCase> LoadBackendNodeCase(const std::string& dir) {
  onnx::ModelProto model;
  if (auto s = ReadProto(dir + "/model.onnx", &model); !s.ok()) return s;
  const auto& graph = model.graph();
  if (graph.node_size() != 1) return absl::UnimplementedError("not a single-node model");
  const auto& node = graph.node(0);
  BackendNodeCase c;
  c.op_type = node.op_type();
  for (const auto& imp : model.opset_import())
    if (imp.domain().empty() || imp.domain() == "ai.onnx") c.opset = static_cast<int>(imp.version());
  auto attrs = AttributesFromProto(node);
  if (!attrs.ok()) return attrs.status();
  c.attributes = *std::move(attrs);
  // Graph inputs are fed from input_N.pb in order; node inputs are matched by name.
  std::vector<std::pair<std::string, Tensor>> fed;
  for (int i = 0; i < graph.input_size(); ++i) {
    onnx::TensorProto p;
    if (auto s = ReadProto(absl::StrCat(dir, "/test_data_set_0/input_", i, ".pb"), &p); !s.ok()) return s;
    auto t = TensorFromProto(p);
    if (!t.ok()) return t.status();
    fed.emplace_back(graph.input(i).name(), *std::move(t));
  }
  for (const std::string& name : node.input()) {
    Tensor t;
    for (const auto& [n, v] : fed)
      if (n == name && !name.empty()) t = v;
    c.inputs.push_back(t);
  }
  for (int i = 0; i < graph.output_size(); ++i) {
    onnx::TensorProto p;
    if (auto s = ReadProto(absl::StrCat(dir, "/test_data_set_0/output_", i, ".pb"), &p); !s.ok()) return s;
    auto t = TensorFromProto(p);
    if (!t.ok()) return t.status();
    c.expected.push_back(*std::move(t));
  }
  return c;
}

}  // namespace attune::testing

#include <cmath>
#include <cstring>
#include <set>

#include "tests/common/backend_index.h"
#include "tests/common/paths.h"

namespace attune::testing {

/// Backend test names whose single op is in `ops`, minus those with
/// sequence/optional types and those listed in `skip`; the placeholder case
/// when there are none (see backend_index.h).
inline std::vector<std::string> BackendTestsFor(const std::set<std::string>& ops, const std::set<std::string>& skip) {
  std::vector<std::string> names;
  for (const BackendIndexRow& row : BackendIndex()) {
    if (row.op_types.size() != 1 || !ops.count(row.op_types[0]) || skip.count(row.name)) continue;
    bool plain = true;
    for (const auto* dtypes : {&row.input_dtypes, &row.output_dtypes})
      for (const std::string& d : *dtypes) plain &= d.find('(') == std::string::npos;
    if (plain) names.push_back(row.name);
  }
  return CasesOrPlaceholder(std::move(names));
}

inline double ValueAsDouble(const Tensor& t, int64_t i) {
  switch (t.type()) {
    case ElementType::kFloat32: return t.data<float>()[i];
    case ElementType::kFloat64: return t.data<double>()[i];
    case ElementType::kFloat16: return HalfToFloat(t.data<Float16>()[i]);
    case ElementType::kBFloat16: return BFloat16ToFloat(t.data<BFloat16>()[i]);
    default: return 0;
  }
}

/// Empty string when `got` matches `want` (floats within rtol 1e-3 + atol 1e-6, the rest bit-exact).
inline std::string CompareTensors(const Tensor& got, const Tensor& want) {
  if (got.type() != want.type() || got.shape() != want.shape())
    return absl::StrCat("got ", got.DebugString(), ", want ", want.DebugString());
  const bool is_float = want.type() == ElementType::kFloat32 || want.type() == ElementType::kFloat64 ||
                        want.type() == ElementType::kFloat16 || want.type() == ElementType::kBFloat16;
  if (!is_float) {
    if (want.byte_size() > 0 && std::memcmp(got.raw_data(), want.raw_data(), want.byte_size()) != 0)
      return "values differ";
    return "";
  }
  const double rtol = want.type() == ElementType::kFloat32 || want.type() == ElementType::kFloat64 ? 1e-3 : 1e-2;
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const double g = ValueAsDouble(got, i), w = ValueAsDouble(want, i);
    if (std::isnan(w) && std::isnan(g)) continue;
    if (std::isinf(w) && g == w) continue;
    if (!(std::abs(g - w) <= 1e-6 + rtol * std::abs(w)))
      return absl::StrCat("element ", i, ": got ", g, ", want ", w);
  }
  return "";
}

}  // namespace attune::testing
