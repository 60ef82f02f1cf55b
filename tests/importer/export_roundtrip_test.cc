// Export: import -> export -> import gives the same graph; the ModelProto is well formed.
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "importer/onnx_exporter.h"
#include "tests/common/paths.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::AttributeProto;
using onnx::TensorProto;

std::string Describe(const Value* v) {
  if (v == nullptr) return "<none>";
  return v->name() + ":" + ElementTypeName(v->type()) + (v->shape() ? SymbolicShapeToString(*v->shape()) : "[?]");
}

bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

void ExpectSameGraph(const Graph& a, const Graph& b) {
  EXPECT_EQ(a.opsets(), b.opsets());
  EXPECT_EQ(a.metadata, b.metadata);
  EXPECT_EQ(a.producer_name, b.producer_name);
  EXPECT_EQ(a.graph_name, b.graph_name);
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) EXPECT_EQ(Describe(a.inputs()[i]), Describe(b.inputs()[i]));
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) EXPECT_EQ(Describe(a.outputs()[i]), Describe(b.outputs()[i]));
  ASSERT_EQ(a.num_nodes(), b.num_nodes());
  const auto na = *a.TopologicalOrder();
  const auto nb = *b.TopologicalOrder();
  for (size_t i = 0; i < na.size(); ++i) {
    const Node& x = *na[i];
    const Node& y = *nb[i];
    SCOPED_TRACE(x.Describe());
    EXPECT_EQ(x.op_type(), y.op_type());
    EXPECT_EQ(x.domain(), y.domain());
    EXPECT_EQ(x.name(), y.name());
    // Trailing omitted inputs may be dropped on export; the present ones must agree.
    for (int k = 0; k < std::max(x.num_inputs(), y.num_inputs()); ++k) {
      EXPECT_EQ(Describe(x.input(k)), Describe(y.input(k))) << "input " << k;
      if (x.input(k) && y.input(k) && x.input(k)->is_constant()) {
        ASSERT_TRUE(y.input(k)->is_constant());
        EXPECT_TRUE(SameTensor(*x.input(k)->constant(), *y.input(k)->constant())) << x.input(k)->name();
      }
    }
    ASSERT_EQ(x.num_outputs(), y.num_outputs());
    for (int k = 0; k < x.num_outputs(); ++k) EXPECT_EQ(Describe(x.output(k)), Describe(y.output(k)));
    EXPECT_EQ(x.attributes().ToString(), y.attributes().ToString());
    for (const auto& [name, value] : x.attributes().all()) {
      if (const Tensor* t = std::get_if<Tensor>(&value)) {
        auto other = y.attributes().GetTensor(name);
        ASSERT_TRUE(other.ok());
        EXPECT_TRUE(SameTensor(*t, *other)) << name;
      }
    }
  }
}

std::unique_ptr<Graph> RoundTrip(const Graph& graph) {
  auto bytes = ExportModelToBytes(graph);
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  if (!bytes.ok()) return nullptr;
  auto again = ImportModelFromBytes(*bytes, "");
  EXPECT_TRUE(again.ok()) << again.status();
  return again.ok() ? *std::move(again) : nullptr;
}

onnx::ModelProto RichModel() {
  onnx::ModelProto m = MinimalModel(17);
  auto* prop = m.add_metadata_props();
  prop->set_key("k");
  prop->set_value("v");
  AddInput(m, "x", TensorProto::FLOAT, {std::string("batch"), int64_t{-1}, int64_t{4}});
  AddOutput(m, "y", TensorProto::FLOAT, {std::string("batch"), int64_t{-1}, int64_t{4}});
  AddOutput(m, "shape_const", TensorProto::INT64, {3});
  AddInitializer(m, "W", TensorProto::FLOAT, {4, 4})->set_raw_data(RawBytes(std::vector<float>(16, 0.5f)));
  auto* b = AddInitializer(m, "b", TensorProto::FLOAT16, {4});
  for (int32_t v : {0x3C00, 0x4000, 0xBC00, 0x0001}) b->add_int32_data(v);
  auto* shape = AddInitializer(m, "shape_const", TensorProto::INT64, {3});
  for (int64_t v : {0, -1, 4}) shape->add_int64_data(v);
  AddNode(m, "MatMul", {"x", "W"}, {"xw"}, "mm");
  AddAttribute(AddNode(m, "Cast", {"b"}, {"b32"}, "cast"), "to", AttributeProto::INT)->set_i(1);
  AddNode(m, "Add", {"xw", "b32"}, {"sum"}, "add");
  AddNode(m, "Clip", {"sum", "", "cmax"}, {"clipped"}, "clip");
  auto* cmax = AddNode(m, "Constant", {}, {"cmax"}, "cmax_node");
  auto* t = AddAttribute(cmax, "value", AttributeProto::TENSOR)->mutable_t();
  t->set_data_type(TensorProto::FLOAT);
  t->add_float_data(6.0f);
  auto* tr = AddNode(m, "Transpose", {"clipped"}, {"tr"}, "tr");
  auto* perm = AddAttribute(tr, "perm", AttributeProto::INTS);
  for (int64_t p : {0, 1, 2}) perm->add_ints(p);
  auto* ln = AddNode(m, "LayerNormalization", {"tr", "W_row", "W_row"}, {"y"}, "ln");
  AddAttribute(ln, "epsilon", AttributeProto::FLOAT)->set_f(1e-5f);
  AddAttribute(ln, "axis", AttributeProto::INT)->set_i(-1);
  AddInitializer(m, "W_row", TensorProto::FLOAT, {4})->set_raw_data(RawBytes<float>({1, 2, 3, 4}));
  auto* custom = AddNode(m, "Custom", {"x"}, {"unused"}, "custom");
  custom->set_domain("com.example");
  AddAttribute(custom, "names", AttributeProto::STRINGS)->add_strings("a");
  AddAttribute(custom, "scales", AttributeProto::FLOATS)->add_floats(0.125f);
  AddAttribute(custom, "mode", AttributeProto::STRING)->set_s("fast");
  auto* example = m.add_opset_import();
  example->set_domain("com.example");
  example->set_version(3);
  return m;
}

TEST(ExportRoundTripTest, BuiltModel) {
  auto g = Import(RichModel());
  ASSERT_TRUE(g.ok()) << g.status();
  auto again = RoundTrip(**g);
  ASSERT_NE(again, nullptr);
  ExpectSameGraph(**g, *again);
  EXPECT_EQ(again->num_nodes(), 8);
  EXPECT_EQ(again->FindValue("W")->constant()->data<float>()[15], 0.5f);
}

TEST(ExportRoundTripTest, ModelProtoFields) {
  auto g = Import(RichModel());
  ASSERT_TRUE(g.ok()) << g.status();
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*ExportModelToBytes(**g)));
  EXPECT_GE(out.ir_version(), 8);
  EXPECT_EQ(out.graph().initializer_size(), 4);  // W, b, shape_const, W_row
  for (const auto& init : out.graph().initializer()) {
    EXPECT_TRUE(init.has_raw_data()) << init.name();
    EXPECT_EQ(init.float_data_size() + init.int32_data_size() + init.int64_data_size(), 0);
  }
  // Graph inputs are only real inputs, never initializers.
  ASSERT_EQ(out.graph().input_size(), 1);
  const auto& dims = out.graph().input(0).type().tensor_type().shape().dim();
  ASSERT_EQ(dims.size(), 3);
  EXPECT_EQ(dims[0].dim_param(), "batch");
  EXPECT_FALSE(dims[1].has_dim_param() || dims[1].has_dim_value());
  EXPECT_EQ(dims[2].dim_value(), 4);
}

TEST(ExportRoundTripTest, AttuneDomainAndIrVersionFollowTheOpset) {
  Graph g;
  g.SetOpset("", 23);
  Value* q = g.AddValue("q", ElementType::kFloat32, SymbolicShape{Dim::Symbol("b"), Dim::Known(8)});
  g.AddInput(q);
  Value* y = g.AddValue("y", ElementType::kFloat32);
  Attributes a;
  a.Set("num_heads", int64_t{2});
  a.Set("causal", int64_t{1});
  g.AddNode("MultiHeadAttention", "attune", "mha", {q, q, q}, {y}, a);
  g.AddOutput(y);
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(*ExportModelToBytes(g)));
  EXPECT_GE(out.ir_version(), 10);
  bool has_attune = false;
  for (const auto& op : out.opset_import()) has_attune |= op.domain() == "attune" && op.version() == 1;
  EXPECT_TRUE(has_attune);
  EXPECT_EQ(out.graph().node(0).domain(), "attune");

  auto again = ImportModelFromBytes(out.SerializeAsString(), "");
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ((*again)->OpsetFor("attune"), 1);
  EXPECT_EQ(*(*again)->nodes()[0]->attributes().GetInt("num_heads"), 2);
}

TEST(ExportRoundTripTest, ExportToFile) {
  auto g = Import(RichModel());
  ASSERT_TRUE(g.ok()) << g.status();
  TempDir dir;
  ASSERT_TRUE(ExportModelToFile(**g, dir / "out.onnx").ok());
  auto again = ImportModelFromFile(dir / "out.onnx");
  ASSERT_TRUE(again.ok()) << again.status();
  ExpectSameGraph(**g, **again);
  EXPECT_FALSE(ExportModelToFile(**g, dir / "no/such/folder/out.onnx").ok());
}

TEST(ExportRoundTripTest, EveryExampleModel) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(SourceDir() + "/models")) {
    const std::string path = entry.path().string() + "/model.onnx";
    if (!std::filesystem::exists(path)) continue;
    SCOPED_TRACE(path);
    auto g = ImportModelFromFile(path);
    ASSERT_TRUE(g.ok()) << g.status();
    auto again = RoundTrip(**g);
    ASSERT_NE(again, nullptr);
    ExpectSameGraph(**g, *again);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace
}  // namespace attune::testing
