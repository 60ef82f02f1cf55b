// Model-local ONNX functions are expanded into the main graph.
#include <string>
#include <vector>

#include "google/protobuf/unknown_field_set.h"
#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::AttributeProto;

// custom.Scale(X) = Relu(X * alpha), alpha a function attribute.
onnx::FunctionProto* AddScaleFunction(onnx::ModelProto& m, int64_t opset = 17) {
  auto* custom = m.add_opset_import();
  custom->set_domain("custom");
  custom->set_version(1);
  auto* fn = m.add_functions();
  fn->set_name("Scale");
  fn->set_domain("custom");
  fn->add_input("X");
  fn->add_output("Y");
  fn->add_attribute("alpha");
  auto* fn_opset = fn->add_opset_import();
  fn_opset->set_domain("");
  fn_opset->set_version(opset);
  auto* constant = fn->add_node();
  constant->set_op_type("Constant");
  constant->add_output("A");
  auto* ref = constant->add_attribute();
  ref->set_name("value_float");
  ref->set_type(AttributeProto::FLOAT);
  ref->set_ref_attr_name("alpha");
  auto* mul = fn->add_node();
  mul->set_op_type("Mul");
  mul->add_input("X");
  mul->add_input("A");
  mul->add_output("T");
  auto* relu = fn->add_node();
  relu->set_op_type("Relu");
  relu->add_input("T");
  relu->add_output("Y");
  return fn;
}

onnx::NodeProto* AddCall(onnx::ModelProto& m, const std::string& in, const std::string& out, const std::string& name) {
  auto* call = AddNode(m, "Scale", {in}, {out}, name);
  call->set_domain("custom");
  return call;
}

TEST(FunctionInlineTest, CallsAreExpandedWithAttributesResolved) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  onnx::FunctionProto* fn = AddScaleFunction(m);
  // A default for alpha (FunctionProto.attribute_proto, newer than this build's ONNX schema).
  AttributeProto alpha_default;
  alpha_default.set_name("alpha");
  alpha_default.set_type(AttributeProto::FLOAT);
  alpha_default.set_f(3.0f);
  fn->GetReflection()->MutableUnknownFields(fn)->AddLengthDelimited(11, alpha_default.SerializeAsString());

  AddAttribute(AddCall(m, "x", "mid", "first"), "alpha", AttributeProto::FLOAT)->set_f(2.0f);
  AddCall(m, "mid", "y", "second");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Graph& graph = **g;

  std::vector<std::string> ops;
  for (const Node* n : graph.nodes()) ops.push_back(n->op_type());
  EXPECT_EQ(ops, (std::vector<std::string>{"Constant", "Mul", "Relu", "Constant", "Mul", "Relu"}));
  const std::vector<Node*> nodes = graph.nodes();
  EXPECT_EQ(*nodes[0]->attributes().GetFloat("value_float"), 2.0f);
  EXPECT_EQ(*nodes[3]->attributes().GetFloat("value_float"), 3.0f);
  // Formal parameters map onto the call's values; inner values are private to each call.
  EXPECT_EQ(nodes[1]->input(0)->name(), "x");
  EXPECT_EQ(nodes[2]->output(0)->name(), "mid");
  EXPECT_EQ(nodes[4]->input(0)->name(), "mid");
  EXPECT_EQ(nodes[5]->output(0)->name(), "y");
  EXPECT_NE(nodes[1]->output(0), nodes[4]->output(0));
  EXPECT_EQ(nodes[1]->output(0)->name().rfind("first/", 0), 0u) << nodes[1]->output(0)->name();
  EXPECT_EQ(nodes[4]->output(0)->name().rfind("second/", 0), 0u) << nodes[4]->output(0)->name();
}

TEST(FunctionInlineTest, MissingAttributeWithoutDefaultIsDropped) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  AddScaleFunction(m);
  AddCall(m, "x", "y", "call");
  // Without alpha the inner Constant has no value at all: a clear error, not a crash.
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kInvalidArgument, {"Constant", "found none"}));
}

TEST(FunctionInlineTest, NestedFunctionsAndUnusedOnes) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  AddScaleFunction(m);
  auto* twice = m.add_functions();  // custom.Twice(X) = Scale(Scale(X, alpha=2), alpha=2)
  twice->set_name("Twice");
  twice->set_domain("custom");
  twice->add_input("X");
  twice->add_output("Y");
  for (int i = 0; i < 2; ++i) {
    auto* call = twice->add_node();
    call->set_op_type("Scale");
    call->set_domain("custom");
    call->add_input(i == 0 ? "X" : "H");
    call->add_output(i == 0 ? "H" : "Y");
    auto* alpha = call->add_attribute();
    alpha->set_name("alpha");
    alpha->set_type(AttributeProto::FLOAT);
    alpha->set_f(2.0f);
  }
  auto* unused = m.add_functions();
  unused->set_name("NeverCalled");
  unused->set_domain("custom");
  auto* call = AddNode(m, "Twice", {"x"}, {"y"}, "t");
  call->set_domain("custom");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 6);
  EXPECT_EQ((*g)->outputs()[0]->producer()->op_type(), "Relu");
}

TEST(FunctionInlineTest, RecursionIsRefused) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  auto* custom = m.add_opset_import();
  custom->set_domain("custom");
  custom->set_version(1);
  auto* fn = m.add_functions();
  fn->set_name("Loop");
  fn->set_domain("custom");
  fn->add_input("X");
  fn->add_output("Y");
  auto* self = fn->add_node();
  self->set_op_type("Loop");
  self->set_domain("custom");
  self->add_input("X");
  self->add_output("Y");
  AddNode(m, "Loop", {"x"}, {"y"}, "r")->set_domain("custom");
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kInvalidArgument, {"function 'Loop'", "recursive"}));
}

TEST(FunctionInlineTest, DifferentOpsetVersionIsUnimplemented) {
  onnx::ModelProto m = MinimalModel(17);
  AddInput(m, "x");
  AddOutput(m, "y");
  AddScaleFunction(m, 13);
  AddAttribute(AddCall(m, "x", "y", "call"), "alpha", AttributeProto::FLOAT)->set_f(1.0f);
  EXPECT_TRUE(HasError(Import(m).status(), absl::StatusCode::kUnimplemented,
                       {"function 'Scale' imports opset 13", "model imports 17"}));
}

}  // namespace
}  // namespace attune::testing
