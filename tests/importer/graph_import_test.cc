// What the importer puts on the Graph: metadata, opsets, interface shapes, nodes, attributes.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

TEST(GraphImportTest, ModelMetadataAndOpsets) {
  onnx::ModelProto m = MinimalModel(17);
  m.set_ir_version(7);
  m.set_producer_name("pytorch");
  m.set_producer_version("1.13.0");
  m.mutable_graph()->set_name("torch_jit");
  auto* ms = m.add_opset_import();
  ms->set_domain("com.microsoft");
  ms->set_version(1);
  auto* prop = m.add_metadata_props();
  prop->set_key("author");
  prop->set_value("me");
  AddInput(m, "x");
  AddOutput(m, "x");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->producer_name, "pytorch");
  EXPECT_EQ((*g)->producer_version, "1.13.0");
  EXPECT_EQ((*g)->graph_name, "torch_jit");
  EXPECT_EQ((*g)->ir_version, 7);
  EXPECT_EQ((*g)->OpsetFor(""), 17);
  EXPECT_EQ((*g)->OpsetFor("ai.onnx"), 17);
  EXPECT_EQ((*g)->OpsetFor("com.microsoft"), 1);
  EXPECT_EQ((*g)->metadata.at("author"), "me");
}

TEST(GraphImportTest, AiOnnxDomainMeansTheDefaultDomain) {
  onnx::ModelProto m = MinimalModel();
  m.mutable_opset_import(0)->set_domain("ai.onnx");
  m.mutable_opset_import(0)->set_version(13);
  AddInput(m, "x");
  AddOutput(m, "y");
  AddNode(m, "Relu", {"x"}, {"y"}, "r")->set_domain("ai.onnx");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->OpsetFor(""), 13);
  EXPECT_EQ((*g)->nodes()[0]->domain(), "");
}

TEST(GraphImportTest, InterfaceShapesAndTypes) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT16, {std::string("batch"), std::string("seq"), int64_t{64}});
  AddInput(m, "mask", TensorProto::BOOL, {int64_t{-1}, int64_t{4}});  // first dim unknown
  auto* no_shape = m.mutable_graph()->add_input();
  no_shape->set_name("free");
  no_shape->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::INT64);
  AddOutput(m, "y", TensorProto::FLOAT16, {std::string("batch"), std::string("seq"), int64_t{64}});
  AddOutput(m, "scalar", TensorProto::INT64, {});
  AddNode(m, "Identity", {"x"}, {"y"});
  AddNode(m, "Size", {"free"}, {"scalar"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Graph& graph = **g;
  ASSERT_EQ(graph.inputs().size(), 3u);
  const Value* x = graph.inputs()[0];
  EXPECT_EQ(x->name(), "x");
  EXPECT_EQ(x->type(), ElementType::kFloat16);
  ASSERT_TRUE(x->shape().has_value());
  ASSERT_EQ(x->shape()->size(), 3u);
  EXPECT_TRUE((*x->shape())[0].is_symbol());
  EXPECT_EQ((*x->shape())[0].symbol(), "batch");
  EXPECT_EQ((*x->shape())[1].symbol(), "seq");
  EXPECT_TRUE((*x->shape())[2].is_known());
  EXPECT_EQ((*x->shape())[2].value(), 64);
  const Value* mask = graph.inputs()[1];
  EXPECT_EQ(mask->type(), ElementType::kBool);
  EXPECT_TRUE((*mask->shape())[0].is_unknown());
  EXPECT_EQ((*mask->shape())[1].value(), 4);
  EXPECT_FALSE(graph.inputs()[2]->shape().has_value());  // unknown rank
  ASSERT_EQ(graph.outputs().size(), 2u);
  EXPECT_EQ(graph.outputs()[0]->name(), "y");
  EXPECT_EQ(SymbolicShapeToString(*graph.outputs()[0]->shape()), "[batch, seq, 64]");
  EXPECT_EQ(graph.outputs()[1]->type(), ElementType::kInt64);
  EXPECT_TRUE(graph.outputs()[1]->shape()->empty());  // rank 0
}

TEST(GraphImportTest, ValueInfoShapesIntermediates) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT, {std::string("n"), int64_t{8}});
  AddOutput(m, "y", TensorProto::FLOAT, {std::string("n"), int64_t{8}});
  AddNode(m, "Relu", {"x"}, {"t"});
  AddNode(m, "Neg", {"t"}, {"y"});
  SetTensorType(m.mutable_graph()->add_value_info(), "t", TensorProto::FLOAT, {std::string("n"), int64_t{8}});
  auto* seq = m.mutable_graph()->add_value_info();  // a non-tensor hint is ignored
  seq->set_name("y");
  seq->mutable_type()->mutable_sequence_type();
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Value* t = (*g)->FindValue("t");
  EXPECT_EQ(t->type(), ElementType::kFloat32);
  EXPECT_EQ(SymbolicShapeToString(*t->shape()), "[n, 8]");
}

TEST(GraphImportTest, UnnamedNodesGetUniqueGeneratedNames) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  AddNode(m, "Relu", {"x"}, {"Relu_0"});         // a value already called Relu_0
  AddNode(m, "Relu", {"Relu_0"}, {"b"});
  AddNode(m, "Relu", {"b"}, {"c"}, "Relu_2");    // an explicit name already taken
  AddNode(m, "Relu", {"c"}, {"y"});
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<std::string> names;
  for (const Node* n : (*g)->nodes()) names.push_back(n->name());
  EXPECT_EQ(names, (std::vector<std::string>{"Relu_1", "Relu_3", "Relu_2", "Relu_4"}));
  EXPECT_NE((*g)->FindValue("Relu_0"), nullptr);
}

TEST(GraphImportTest, AttributesOfEveryKind) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  auto* node = AddNode(m, "Custom", {"x"}, {"y"}, "n");
  node->set_domain("com.example");
  auto* example = m.add_opset_import();
  example->set_domain("com.example");
  example->set_version(2);
  AddAttribute(node, "f", AttributeProto::FLOAT)->set_f(0.5f);
  AddAttribute(node, "i", AttributeProto::INT)->set_i(-7);
  AddAttribute(node, "s", AttributeProto::STRING)->set_s("NOTSET");
  auto* t = AddAttribute(node, "t", AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(TensorProto::INT64);
  t->add_dims(2);
  t->add_int64_data(3);
  t->add_int64_data(4);
  auto* fs = AddAttribute(node, "fs", AttributeProto::FLOATS);
  fs->add_floats(1.5f);
  fs->add_floats(-2.0f);
  auto* is = AddAttribute(node, "is", AttributeProto::INTS);
  for (int64_t v : {0, 2, 1, 3}) is->add_ints(v);
  auto* ss = AddAttribute(node, "ss", AttributeProto::STRINGS);
  ss->add_strings("a");
  ss->add_strings("bc");
  AddAttribute(node, "empty", AttributeProto::INTS);
  auto* untyped = node->add_attribute();  // an old model's attribute without a type
  untyped->set_name("old");
  untyped->set_i(5);
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* n = (*g)->nodes()[0];
  EXPECT_EQ(n->domain(), "com.example");
  const Attributes& a = n->attributes();
  EXPECT_EQ(*a.GetFloat("f"), 0.5f);
  EXPECT_EQ(*a.GetInt("i"), -7);
  EXPECT_EQ(*a.GetString("s"), "NOTSET");
  auto tensor = a.GetTensor("t");
  ASSERT_TRUE(tensor.ok());
  EXPECT_EQ(tensor->type(), ElementType::kInt64);
  EXPECT_EQ(tensor->data<int64_t>()[1], 4);
  EXPECT_EQ(*a.GetFloats("fs"), (std::vector<float>{1.5f, -2.0f}));
  EXPECT_EQ(*a.GetInts("is"), (std::vector<int64_t>{0, 2, 1, 3}));
  EXPECT_EQ(*a.GetStrings("ss"), (std::vector<std::string>{"a", "bc"}));
  EXPECT_TRUE(a.GetInts("empty")->empty());
  EXPECT_EQ(*a.GetInt("old"), 5);
}

TEST(GraphImportTest, OmittedOptionalInputsAndOutputs) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddInput(m, "max");
  AddOutput(m, "y");
  AddNode(m, "Clip", {"x", "", "max"}, {"y"}, "clip");
  AddNode(m, "Dropout", {"x"}, {"", "mask"}, "drop");
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  const Node* clip = (*g)->FindNode("clip");
  ASSERT_EQ(clip->num_inputs(), 3);
  EXPECT_EQ(clip->input(1), nullptr);
  EXPECT_EQ(clip->input(2)->name(), "max");
  const Node* drop = (*g)->FindNode("drop");
  ASSERT_EQ(drop->num_outputs(), 2);
  EXPECT_EQ(drop->output(0), nullptr);
  EXPECT_EQ(drop->output(1)->name(), "mask");
}

TEST(GraphImportTest, ConstantNodesStayNodesWithTypedOutputs) {
  onnx::ModelProto m = MinimalModel();
  AddOutput(m, "a", 0);
  AddOutput(m, "b", 0);
  AddNode(m, "Constant", {}, {"a"}, "ints");
  auto* ints = AddAttribute(m.mutable_graph()->mutable_node(0), "value_ints", AttributeProto::INTS);
  ints->add_ints(1);
  ints->add_ints(2);
  ints->add_ints(3);
  auto* tensor_node = AddNode(m, "Constant", {}, {"b"}, "tensor");
  auto* t = AddAttribute(tensor_node, "value", AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(TensorProto::FLOAT16);
  t->add_dims(2);
  t->add_dims(1);
  t->set_raw_data(std::string("\x00\x3c\x00\xc0", 4));
  auto g = Import(m);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_EQ((*g)->num_nodes(), 2);
  const Value* a = (*g)->FindValue("a");
  EXPECT_FALSE(a->is_constant());
  EXPECT_EQ(a->producer()->op_type(), "Constant");
  EXPECT_EQ(a->type(), ElementType::kInt64);
  EXPECT_EQ(SymbolicShapeToString(*a->shape()), "[3]");
  const Value* b = (*g)->FindValue("b");
  EXPECT_EQ(b->type(), ElementType::kFloat16);
  EXPECT_EQ(SymbolicShapeToString(*b->shape()), "[2, 1]");
}

TEST(GraphImportTest, ConstantNodeErrors) {
  onnx::ModelProto strings = MinimalModel();
  AddOutput(strings, "a");
  AddAttribute(AddNode(strings, "Constant", {}, {"a"}, "k"), "value_string", AttributeProto::STRING)->set_s("x");
  EXPECT_TRUE(HasError(Import(strings).status(), absl::StatusCode::kUnimplemented,
                       {"node Constant 'k'", "value_string"}));

  onnx::ModelProto none = MinimalModel();
  AddOutput(none, "a");
  AddNode(none, "Constant", {}, {"a"}, "k");
  EXPECT_TRUE(HasError(Import(none).status(), absl::StatusCode::kInvalidArgument,
                       {"node Constant 'k'", "exactly one", "found none"}));

  onnx::ModelProto string_tensor = MinimalModel();
  AddOutput(string_tensor, "a");
  auto* t = AddAttribute(AddNode(string_tensor, "Constant", {}, {"a"}, "k"), "value", AttributeProto::TENSOR)
                ->mutable_t();
  t->set_data_type(TensorProto::STRING);
  t->add_string_data("s");
  EXPECT_TRUE(HasError(Import(string_tensor).status(), absl::StatusCode::kUnimplemented,
                       {"node Constant 'k'", "attribute 'value'", "string"}));
}

}  // namespace
}  // namespace attune::testing
