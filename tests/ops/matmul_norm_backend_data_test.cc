// The ONNX backend test cases of MatMul, Gemm, Einsum, LayerNormalization and
// RMSNormalization (reference outputs produced by ONNX, not by Attune), run
// through the kernels directly. The whole-model conformance runner covers the
// importer as well; this keeps the kernels checked on their own.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "tests/common/kernel_runner.h"
#include "tests/common/paths.h"
#include "tests/ops/matmul_test_util.h"

namespace attune::testing {
namespace {

namespace fs = std::filesystem;

bool ReadProto(const fs::path& path, google::protobuf::MessageLite* message) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return in.good() && message->ParseFromString(buffer.str());
}

// Only raw_data tensors of the element types these tests use.
std::optional<Tensor> ToTensor(const onnx::TensorProto& proto) {
  const auto type = static_cast<ElementType>(proto.data_type());
  std::vector<int64_t> shape(proto.dims().begin(), proto.dims().end());
  auto t = Tensor::Create(type, shape);
  if (!t.ok() || !proto.has_raw_data() || proto.raw_data().size() != t->byte_size()) return std::nullopt;
  std::memcpy(t->raw_data(), proto.raw_data().data(), t->byte_size());
  return *t;
}

Attributes ToAttributes(const onnx::NodeProto& node) {
  Attributes attrs;
  for (const onnx::AttributeProto& a : node.attribute()) {
    switch (a.type()) {
      case onnx::AttributeProto::INT: attrs.Set(a.name(), a.i()); break;
      case onnx::AttributeProto::FLOAT: attrs.Set(a.name(), a.f()); break;
      case onnx::AttributeProto::STRING: attrs.Set(a.name(), a.s()); break;
      default: break;
    }
  }
  return attrs;
}

TEST(BackendDataTest, MatMulAndNormOps) {
  ATTUNE_SKIP_WITHOUT_BACKEND_DATA();
  const fs::path root = BackendNodeDir();
  const std::set<std::string> ops = {"MatMul", "Gemm", "Einsum", "LayerNormalization", "RMSNormalization"};
  int checked = 0;
  for (const fs::directory_entry& dir : fs::directory_iterator(root)) {
    onnx::ModelProto model;
    if (!ReadProto(dir.path() / "model.onnx", &model) || model.graph().node_size() != 1) continue;
    const onnx::NodeProto& node = model.graph().node(0);
    if (!ops.count(node.op_type())) continue;
    SCOPED_TRACE(dir.path().filename().string());
    int opset = 0;
    for (const auto& import : model.opset_import())
      if (import.domain().empty() || import.domain() == "ai.onnx") opset = static_cast<int>(import.version());

    KernelCall call;
    call.op_type = node.op_type();
    call.opset = opset;
    call.attributes = ToAttributes(node);
    call.num_outputs = node.output_size();
    const fs::path data = dir.path() / "test_data_set_0";
    bool ok = true;
    for (int i = 0; i < node.input_size(); ++i) {
      onnx::TensorProto proto;
      std::optional<Tensor> t;
      if (ReadProto(data / ("input_" + std::to_string(i) + ".pb"), &proto)) t = ToTensor(proto);
      ok &= t.has_value();
      if (t) call.inputs.push_back(*t);
    }
    ASSERT_TRUE(ok) << "unreadable inputs";
    auto out = RunKernel(call);
    ASSERT_TRUE(out.ok()) << out.status();
    for (int o = 0; o < node.output_size(); ++o) {
      onnx::TensorProto proto;
      ASSERT_TRUE(ReadProto(data / ("output_" + std::to_string(o) + ".pb"), &proto));
      std::optional<Tensor> want = ToTensor(proto);
      ASSERT_TRUE(want.has_value());
      ASSERT_EQ((*out)[o].type(), want->type()) << "output " << o;
      ASSERT_EQ((*out)[o].shape(), want->shape()) << "output " << o;
      const std::vector<double> got = ToDoubles((*out)[o]), ref = ToDoubles(*want);
      for (size_t i = 0; i < ref.size(); ++i)
        ASSERT_NEAR(got[i], ref[i], 1e-4 * (1 + std::abs(ref[i]))) << "output " << o << " element " << i;
    }
    ++checked;
  }
  // 60+ in the ONNX 1.22 set; 38 in ONNX 1.12's, which predates RMSNormalization.
  const bool newer_set = FindBackendData().set == BackendData::Set::kOnnx122;
  EXPECT_GE(checked, newer_set ? 60 : 38) << "expected the MatMul/Gemm/Einsum/LayerNorm/RMSNorm backend cases";
}

}  // namespace
}  // namespace attune::testing
