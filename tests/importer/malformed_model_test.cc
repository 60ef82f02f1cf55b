// Broken, hostile or unsupported models: each gives a clear one-line error, never a crash.
#include <filesystem>
#include <random>
#include <string>

#include "gtest/gtest.h"
#include "tests/common/paths.h"
#include "tests/importer/model_builder.h"

namespace attune::testing {
namespace {

using onnx::TensorProto;
constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;
constexpr absl::StatusCode kUnimplemented = absl::StatusCode::kUnimplemented;

std::string RealModelBytes() {
  const std::string path = SourceDir() + "/models/mha_causal/model.onnx";
  std::string bytes = ReadFile(path);
  EXPECT_GT(bytes.size(), 1000u) << path;
  return bytes;
}

// x -> Relu(a) -> Relu(b) -> y, the smallest valid model to break in various ways.
onnx::ModelProto ChainModel() {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x", TensorProto::FLOAT, {2});
  AddOutput(m, "y", TensorProto::FLOAT, {2});
  AddNode(m, "Relu", {"x"}, {"t"}, "a");
  AddNode(m, "Relu", {"t"}, {"y"}, "b");
  return m;
}

TEST(MalformedModelTest, ChainModelIsValid) { EXPECT_TRUE(Import(ChainModel()).ok()); }

TEST(MalformedModelTest, EmptyAndGarbageBytes) {
  EXPECT_TRUE(HasError(ImportModelFromBytes("", "").status(), kInvalid,
                       {"not a valid ONNX model: failed to parse protobuf"}));
  EXPECT_TRUE(HasError(ImportModelFromBytes("this is not a protobuf at all \xff\xff\xff", "").status(), kInvalid,
                       {"not a valid ONNX model: failed to parse protobuf"}));
  std::mt19937 rng(1234);
  for (int i = 0; i < 300; ++i) {
    std::string bytes(1 + rng() % 512, '\0');
    for (char& c : bytes) c = static_cast<char>(rng());
    auto g = ImportModelFromBytes(bytes, "");
    EXPECT_FALSE(g.ok()) << "random buffer " << i << " imported";
  }
}

TEST(MalformedModelTest, EmptyAndMissingFiles) {
  TempDir dir;
  WriteFile(dir / "empty.onnx", "");
  EXPECT_TRUE(HasError(ImportModelFromFile(dir / "empty.onnx").status(), kInvalid,
                       {"not a valid ONNX model: failed to parse protobuf", "empty"}));
  EXPECT_TRUE(HasError(ImportModelFromFile(dir / "missing.onnx").status(), absl::StatusCode::kNotFound,
                       {"cannot open model file", "missing.onnx"}));
  EXPECT_TRUE(HasError(ImportModelFromFile(dir.path()).status(), kInvalid, {"not a regular file"}));
}

TEST(MalformedModelTest, TruncatedRealModel) {
  const std::string bytes = RealModelBytes();
  TempDir dir;
  WriteFile(dir / "half.onnx", bytes.substr(0, bytes.size() / 2));
  EXPECT_TRUE(HasError(ImportModelFromFile(dir / "half.onnx").status(), kInvalid,
                       {"not a valid ONNX model: failed to parse protobuf"}));
  // Every cut point fails cleanly (a cut after the graph loses the opset imports).
  for (size_t cut = 1; cut < bytes.size(); cut += 61) {
    auto g = ImportModelFromBytes(std::string_view(bytes).substr(0, cut), "");
    EXPECT_FALSE(g.ok()) << "cut at " << cut << " imported";
  }
  EXPECT_TRUE(ImportModelFromBytes(bytes, "").ok());
}

TEST(MalformedModelTest, CorruptedRealModelNeverCrashes) {
  const std::string original = RealModelBytes();
  std::mt19937 rng(99);
  int refused = 0;
  for (int i = 0; i < 300; ++i) {
    std::string bytes = original;
    for (int flips = 0; flips < 4; ++flips) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    auto graph = ImportModelFromBytes(bytes, "");
    if (graph.ok()) {
      EXPECT_TRUE((*graph)->Verify().ok()) << "corruption " << i << " imported into an inconsistent graph";
      continue;
    }
    ++refused;
    // A bad model is the user's error, said on one line: never "internal".
    const absl::StatusCode code = graph.status().code();
    EXPECT_TRUE(code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kUnimplemented ||
                code == absl::StatusCode::kResourceExhausted)
        << "corruption " << i << ": " << graph.status();
    EXPECT_EQ(graph.status().message().find_first_of("\r\n"), absl::string_view::npos) << graph.status();
  }
  // Four random bytes break most of a protobuf; none refused would mean nothing was checked.
  EXPECT_GT(refused, 30) << refused << " of 300 corrupted models were refused";
}

TEST(MalformedModelTest, ModelAboveTheByteLimit) {
  ImportOptions options;
  options.max_model_bytes = 10;
  EXPECT_TRUE(HasError(ImportModelFromBytes(Serialize(ChainModel()), "", options).status(),
                       absl::StatusCode::kResourceExhausted, {"above the limit of 10 bytes"}));
}

TEST(MalformedModelTest, NoGraphOrNoIrVersion) {
  onnx::ModelProto no_graph = ChainModel();
  no_graph.clear_graph();
  EXPECT_TRUE(HasError(Import(no_graph).status(), kInvalid, {"not a valid ONNX model: it has no graph"}));
  onnx::ModelProto no_ir = ChainModel();
  no_ir.clear_ir_version();
  EXPECT_TRUE(HasError(Import(no_ir).status(), kInvalid, {"ir_version is missing"}));
}

TEST(MalformedModelTest, Cycle) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "x");
  AddOutput(m, "y");
  AddNode(m, "Add", {"x", "c"}, {"a"}, "first");
  AddNode(m, "Relu", {"a"}, {"c"}, "second");
  AddNode(m, "Relu", {"a"}, {"y"}, "third");
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"cycle"}));
}

TEST(MalformedModelTest, DanglingInputNamesNodeOpAndValue) {
  onnx::ModelProto m = ChainModel();
  m.mutable_graph()->mutable_node(1)->set_input(0, "ghost");
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"node Relu 'b'", "'ghost'", "no node, graph input or initializer"}));
}

TEST(MalformedModelTest, DuplicateProducers) {
  onnx::ModelProto two_nodes = ChainModel();
  AddNode(two_nodes, "Neg", {"x"}, {"t"}, "c");
  EXPECT_TRUE(HasError(Import(two_nodes).status(), kInvalid,
                       {"value 't' is produced twice", "node Relu 'a'", "node Neg 'c'"}));

  onnx::ModelProto overwrites_input = ChainModel();
  AddNode(overwrites_input, "Neg", {"t"}, {"x"}, "c");
  EXPECT_TRUE(HasError(Import(overwrites_input).status(), kInvalid,
                       {"value 'x' is produced twice", "graph input 'x'", "node Neg 'c'"}));

  onnx::ModelProto overwrites_initializer = ChainModel();
  AddInitializer(overwrites_initializer, "t", TensorProto::FLOAT, {1})->add_float_data(1);
  EXPECT_TRUE(HasError(Import(overwrites_initializer).status(), kInvalid,
                       {"value 't' is produced twice", "initializer 't'", "node Relu 'a'"}));

  onnx::ModelProto twice_input = ChainModel();
  AddInput(twice_input, "x");
  EXPECT_TRUE(HasError(Import(twice_input).status(), kInvalid, {"graph input 'x' is declared twice"}));
}

TEST(MalformedModelTest, OutputNobodyProduces) {
  onnx::ModelProto m = ChainModel();
  AddOutput(m, "z");
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"graph output 'z' is not produced"}));
}

TEST(MalformedModelTest, UnknownDtypeOnGraphInput) {
  onnx::ModelProto unknown = ChainModel();
  unknown.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(77);
  EXPECT_TRUE(HasError(Import(unknown).status(), kInvalid, {"graph input 'x'", "unknown element type (data_type 77)"}));

  onnx::ModelProto strings = ChainModel();
  strings.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::STRING);
  EXPECT_TRUE(HasError(Import(strings).status(), kUnimplemented, {"graph input 'x'", "string"}));

  onnx::ModelProto sequence = ChainModel();
  sequence.mutable_graph()->mutable_input(0)->mutable_type()->mutable_sequence_type();
  EXPECT_TRUE(HasError(Import(sequence).status(), kUnimplemented, {"graph input 'x' is a sequence"}));
}

onnx::ModelProto WithSubgraphNode(const std::string& op, bool list) {
  onnx::ModelProto m = MinimalModel();
  AddInput(m, "cond", TensorProto::BOOL, {});
  AddOutput(m, "y");
  auto* node = AddNode(m, op, {"cond"}, {"y"}, "control");
  onnx::GraphProto body;
  body.set_name("body");
  if (list) *AddAttribute(node, "branches", onnx::AttributeProto::GRAPHS)->add_graphs() = body;
  else *AddAttribute(node, op == "If" ? "then_branch" : "body", onnx::AttributeProto::GRAPH)->mutable_g() = body;
  return m;
}

TEST(MalformedModelTest, SubgraphAttributesAreReadAndListsRefused) {
  // A graph attribute becomes a subgraph of its node (the kernel checks
  // which ones its op needs); a list of graphs is refused.
  auto branch = Import(WithSubgraphNode("If", false));
  ASSERT_TRUE(branch.ok()) << branch.status();
  EXPECT_NE((*branch)->FindNode("control")->subgraph("then_branch"), nullptr);
  EXPECT_TRUE(HasError(Import(WithSubgraphNode("If", true)).status(), kUnimplemented,
                       {"node If 'control': attribute 'branches' is a list of graphs"}));
  EXPECT_TRUE(HasError(Import(WithSubgraphNode("Custom", false)).status(), kUnimplemented,
                       {"node Custom 'control': attribute 'body' is a graph, which Attune runs only for If"}));
  // An old model without attribute types: the set field still marks a subgraph.
  onnx::ModelProto untyped = WithSubgraphNode("Scan", false);
  untyped.mutable_graph()->mutable_node(0)->mutable_attribute(0)->clear_type();
  auto scan = Import(untyped);
  ASSERT_TRUE(scan.ok()) << scan.status();
  EXPECT_NE((*scan)->FindNode("control")->subgraph("body"), nullptr);
}

TEST(MalformedModelTest, SparseAndListAttributes) {
  onnx::ModelProto sparse = MinimalModel();
  AddOutput(sparse, "c");
  auto* node = AddNode(sparse, "Constant", {}, {"c"}, "k");
  AddAttribute(node, "sparse_value", onnx::AttributeProto::SPARSE_TENSOR)->mutable_sparse_tensor()->add_dims(3);
  EXPECT_TRUE(HasError(Import(sparse).status(), kUnimplemented,
                       {"node Constant 'k'", "attribute 'sparse_value'", "sparse tensor"}));

  onnx::ModelProto tensors = ChainModel();
  AddAttribute(tensors.mutable_graph()->mutable_node(0), "ts", onnx::AttributeProto::TENSORS)->add_tensors();
  EXPECT_TRUE(HasError(Import(tensors).status(), kUnimplemented, {"node Relu 'a'", "attribute 'ts'"}));

  onnx::ModelProto sparse_init = ChainModel();
  auto* s = sparse_init.mutable_graph()->add_sparse_initializer();
  s->mutable_values()->set_name("sp");
  sparse_init.mutable_graph()->mutable_node(0)->set_input(0, "sp");
  EXPECT_TRUE(HasError(Import(sparse_init).status(), kUnimplemented, {"sparse initializer 'sp'"}));
}

TEST(MalformedModelTest, AttributeProblems) {
  onnx::ModelProto twice = ChainModel();
  AddAttribute(twice.mutable_graph()->mutable_node(0), "alpha", onnx::AttributeProto::FLOAT);
  AddAttribute(twice.mutable_graph()->mutable_node(0), "alpha", onnx::AttributeProto::FLOAT);
  EXPECT_TRUE(HasError(Import(twice).status(), kInvalid, {"node Relu 'a'", "attribute 'alpha' is given twice"}));

  onnx::ModelProto untyped = ChainModel();
  untyped.mutable_graph()->mutable_node(0)->add_attribute()->set_name("mystery");
  EXPECT_TRUE(HasError(Import(untyped).status(), kInvalid, {"attribute 'mystery' has no type and no value"}));

  onnx::ModelProto reference = ChainModel();
  AddAttribute(reference.mutable_graph()->mutable_node(0), "alpha", onnx::AttributeProto::FLOAT)
      ->set_ref_attr_name("outer");
  EXPECT_TRUE(HasError(Import(reference).status(), kInvalid, {"refers to function attribute 'outer'"}));
}

TEST(MalformedModelTest, OpsetImports) {
  onnx::ModelProto none = ChainModel();
  none.clear_opset_import();
  EXPECT_TRUE(HasError(Import(none).status(), kInvalid,
                       {"node Relu 'a'", "default ONNX domain", "opset_import has no version for it"}));

  onnx::ModelProto unknown_domain = ChainModel();
  unknown_domain.mutable_graph()->mutable_node(0)->set_domain("com.example");
  EXPECT_TRUE(HasError(Import(unknown_domain).status(), kInvalid, {"node Relu 'a'", "domain 'com.example'"}));

  onnx::ModelProto conflicting = ChainModel();
  auto* again = conflicting.add_opset_import();
  again->set_domain("ai.onnx");  // the same domain as ""
  again->set_version(13);
  EXPECT_TRUE(HasError(Import(conflicting).status(), kInvalid, {"opset_import lists domain 'ai.onnx' twice"}));

  onnx::ModelProto zero = ChainModel();
  zero.mutable_opset_import(0)->set_version(0);
  EXPECT_TRUE(HasError(Import(zero).status(), kInvalid, {"invalid version 0"}));
}

TEST(MalformedModelTest, NodeWithoutOpType) {
  onnx::ModelProto m = ChainModel();
  m.mutable_graph()->mutable_node(1)->clear_op_type();
  EXPECT_TRUE(HasError(Import(m).status(), kInvalid, {"node #1 ('b') has no op_type"}));
}

}  // namespace
}  // namespace attune::testing
