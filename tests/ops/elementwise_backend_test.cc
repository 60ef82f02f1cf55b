// Spot check of the element-wise kernels against the ONNX backend test data:
// every single-node test of an op of this family whose tensors Attune can hold
// is run through RunKernel and compared with the expected output using the
// ONNX rule |actual - expected| <= 1e-7 + 1e-3 * |expected|.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/common/backend_index.h"
#include "tests/common/compare.h"
#include "tests/common/kernel_runner.h"
#include "tests/common/onnx_pb_loader.h"
#include "tests/common/paths.h"

namespace attune::testing {
namespace {

const std::set<std::string>& FamilyOps() {
  static const std::set<std::string> ops = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Min", "Max", "Sum", "Mean", "Equal", "Less", "Greater",
      "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "Not", "BitShift", "BitwiseAnd", "BitwiseOr",
      "BitwiseXor", "BitwiseNot", "Abs", "Neg", "Sign", "Reciprocal", "Sqrt", "Exp", "Log", "Erf", "Floor", "Ceil",
      "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN",
      "IsInf", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "Softplus", "Softsign", "HardSigmoid", "HardSwish",
      "Elu", "Selu", "Celu", "Mish", "ThresholdedRelu", "PRelu", "Clip", "Where", "Cast", "CastLike"};
  return ops;
}

bool HeldType(std::string_view dtype) {
  static const std::set<std::string_view> held = {"FLOAT",  "DOUBLE", "FLOAT16", "BFLOAT16", "INT8",   "INT16",
                                                  "INT32",  "INT64",  "UINT8",   "UINT16",   "UINT32", "UINT64",
                                                  "BOOL"};
  return held.count(dtype) > 0;
}

// Test names: one op of this family, dtypes Attune holds.
std::vector<std::string> FamilyTests() {
  std::vector<std::string> names;
  for (const BackendIndexRow& row : BackendIndex()) {
    if (row.op_types.size() != 1 || !FamilyOps().count(row.op_types[0])) continue;
    bool held = true;
    for (const auto* dtypes : {&row.input_dtypes, &row.output_dtypes})
      for (const std::string& dtype : *dtypes) held &= HeldType(dtype);
    if (held) names.push_back(row.name);
  }
  return names;
}

bool IsFloatType(ElementType type) {
  return type == ElementType::kFloat32 || type == ElementType::kFloat64 || type == ElementType::kFloat16 ||
         type == ElementType::kBFloat16;
}

// Floats by the ONNX rule; integers and bools must match exactly (a relative
// tolerance on large integers would hide off-by-one results).
void ExpectMatches(const Tensor& actual, const Tensor& expected, const std::string& what) {
  if (!IsFloatType(expected.type()) && actual.type() == expected.type() && actual.shape() == expected.shape()) {
    EXPECT_EQ(0, std::memcmp(actual.raw_data(), expected.raw_data(), expected.byte_size())) << what;
    return;
  }
  const std::string difference = CompareTensors(actual, expected, Tolerance{.rtol = 1e-3, .atol = 1e-7});
  EXPECT_TRUE(difference.empty()) << what << ": " << difference;
}

class ElementwiseBackendTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ElementwiseBackendTest, MatchesExpectedOutput) {
  ATTUNE_SKIP_PLACEHOLDER_CASE(GetParam());
  const std::string dir = BackendNodeDir() + "/" + GetParam();
  auto model = LoadModelFile(dir + "/model.onnx");
  ASSERT_TRUE(model.ok()) << model.status();
  const onnx::GraphProto& graph = model->graph();
  ASSERT_EQ(graph.node_size(), 1);
  const onnx::NodeProto& node = graph.node(0);

  KernelCall call;
  call.op_type = node.op_type();
  call.domain = node.domain();
  for (const auto& opset : model->opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx") call.opset = static_cast<int>(opset.version());
  auto attrs = AttributesFromNode(node);
  ASSERT_TRUE(attrs.ok()) << attrs.status();
  call.attributes = *attrs;

  std::map<std::string, Tensor> graph_inputs;
  for (int i = 0; i < graph.input_size(); ++i) {
    auto t = LoadTensorFile(dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb");
    ASSERT_TRUE(t.ok()) << t.status();
    graph_inputs[graph.input(i).name()] = *t;
  }
  for (const std::string& name : node.input()) {
    if (name.empty()) {
      call.inputs.emplace_back();  // omitted optional input
      continue;
    }
    auto it = graph_inputs.find(name);
    ASSERT_NE(it, graph_inputs.end()) << "node input " << name << " is not a graph input";
    call.inputs.push_back(it->second);
  }
  call.num_outputs = node.output_size();

  auto outputs = RunKernel(call);
  ASSERT_TRUE(outputs.ok()) << outputs.status();
  for (int i = 0; i < graph.output_size(); ++i) {
    auto expected = LoadTensorFile(dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb");
    ASSERT_TRUE(expected.ok()) << expected.status();
    const auto& names = node.output();
    const auto pos = std::find(names.begin(), names.end(), graph.output(i).name()) - names.begin();
    ASSERT_LT(pos, static_cast<int64_t>(outputs->size()));
    ExpectMatches((*outputs)[pos], *expected, GetParam() + " output " + std::to_string(i));
  }
}

INSTANTIATE_TEST_SUITE_P(Onnx, ElementwiseBackendTest, ::testing::ValuesIn(CasesOrPlaceholder(FamilyTests())),
                         [](const auto& info) { return info.param; });

// Guards the spot check itself: the data is found and covers the main ops.
TEST(ElementwiseBackendListTest, CoversTheFamily) {
  ATTUNE_SKIP_WITHOUT_BACKEND_DATA();
  const auto names = FamilyTests();
  std::vector<std::string> expected = {"test_add_bcast", "test_div_uint8", "test_pow_types_int32_float32",
                                       "test_where_long_example", "test_cast_FLOAT_to_FLOAT16",
                                       "test_clip_default_int8_min", "test_isinf_negative", "test_mod_mixed_sign_int8",
                                       "test_max_uint64", "test_equal_bcast"};
  if (FindBackendData().set == BackendData::Set::kOnnx122)  // ops newer than ONNX 1.12's set
    expected.insert(expected.end(), {"test_castlike_FLOAT16_to_FLOAT", "test_gelu_tanh_2"});
  for (const std::string& name : expected)
    EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << name;
}

}  // namespace
}  // namespace attune::testing
