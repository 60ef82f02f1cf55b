// Models found hostile by fuzzing: a wrong number of outputs for the op,
// versions from the future, names with control characters. Each is refused
// at import with one line (InvalidArgument or Unimplemented), never Internal.
#include <string>

#include "attune/session.h"
#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::TensorProto;
constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

void SetFloatScalar(onnx::NodeProto* node, float v) {
  onnx::TensorProto* t = AddAttribute(node, "value", onnx::AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(TensorProto::FLOAT);
  t->add_float_data(v);
}

TEST(HostileModelTest, ConstantWithTwoOutputs) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  SetFloatScalar(AddNode(m, "Constant", {}, {"c", "d"}, "k"), 1.0f);
  AddNode(m, "Add", {"x", "c"}, {"y"}, "add");
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"Constant 'k'", "has 2 outputs; the op gives 1 output"}));
  // Through the whole load (import, passes, compile) the refusal is the same.
  auto session = Session::CreateFromBytes(Serialize(m));
  EXPECT_TRUE(HasError(session.status(), kInvalid, {"Constant 'k'", "2 outputs"}));
}

TEST(HostileModelTest, GatherWithThreeOutputs) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT, {4, 2});
  AddInput(m, "i", TensorProto::INT64, {3});
  AddOutput(m, "y", TensorProto::FLOAT, {3, 2});
  AddNode(m, "Gather", {"x", "i"}, {"y", "y1", "y2"}, "g");
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"Gather 'g'", "has 3 outputs; the op gives 1 output"}));
}

TEST(HostileModelTest, MissingRequiredInput) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  AddNode(m, "Add", {"x"}, {"y"}, "lonely");
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"Add 'lonely'", "has 1 input; the op takes 2 inputs"}));
}

onnx::ModelProto ReluModel(int64_t opset) {
  onnx::ModelProto m = MinimalModel(opset);
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  AddNode(m, "Relu", {"x"}, {"y"}, "r");
  return m;
}

TEST(HostileModelTest, VersionsFromTheFuture) {
  const absl::StatusCode kUnimplemented = absl::StatusCode::kUnimplemented;
  onnx::ModelProto ir = ReluModel(17);
  ir.set_ir_version(100);
  EXPECT_TRUE(HasError(Import(ir).status(), kUnimplemented,
                       {"IR version 100", "IR versions up to 13", "ai.onnx opsets up to 27"}));
  EXPECT_TRUE(HasError(Import(ReluModel(999)).status(), kUnimplemented,
                       {"ai.onnx opset 999", "IR versions up to 13", "ai.onnx opsets up to 27"}));
  // The newest versions Attune knows still load.
  onnx::ModelProto newest = ReluModel(kNewestDefaultOpset);
  newest.set_ir_version(kNewestIrVersion);
  EXPECT_TRUE(Import(newest).ok());
}

// A name with \r\n in it is written escaped: the error stays one line and
// no control character reaches the terminal.
TEST(HostileModelTest, ControlCharactersInNamesAreEscaped) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x\r\ny", TensorProto::FLOAT, {2});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  AddNode(m, "Relu", {"x\r\nz"}, {"y"}, "relu\x1b[31m");
  const absl::Status s = Import(m).status();
  EXPECT_TRUE(HasError(s, kInvalid, {"Relu 'relu\\x1b[31m'", "reads 'x\\r\\nz'"}));
  for (char c : s.message()) EXPECT_GE(static_cast<unsigned char>(c), 0x20) << s;

  onnx::ModelProto twice = MinimalModel();
  AddInput(twice, "x\r\ny", TensorProto::FLOAT, {2});
  AddInput(twice, "x\r\ny", TensorProto::FLOAT, {2});
  AddOutput(twice, "x\r\ny", TensorProto::FLOAT, {2});
  EXPECT_TRUE(HasError(Import(twice).status(), kInvalid, {"graph input 'x\\r\\ny' is declared twice"}));
}

// The session's own messages about inputs escape names too.
TEST(HostileModelTest, RunErrorsEscapeInputNames) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x\r\ny", TensorProto::FLOAT, {2});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  AddNode(m, "Relu", {"x\r\ny"}, {"y"}, "r");
  auto session = Session::CreateFromBytes(Serialize(m));
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run({});
  EXPECT_TRUE(HasError(out.status(), kInvalid, {"missing input 'x\\r\\ny'"}));
}

}  // namespace
}  // namespace attune::testing
