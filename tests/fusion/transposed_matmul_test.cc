// MatMul(A, Transpose(B)) of the last two axes runs as attune.FusedMatMul
// reading B in place: differential tests against the unfused graph, the forms
// that must stay, and the export back to standard ONNX.
#include <filesystem>

#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "importer/attention_export.h"
#include "importer/onnx_importer.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"
#include "tests/common/paths.h"
#include "tests/common/torch_export_graphs.h"

namespace attune::testing {
namespace {

absl::Status Optimise(Graph& graph) {
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  return DefaultPipeline(/*fuse=*/true)->Run(graph, context);
}

// Runs `graph` before and after the pipeline and expects the same outputs.
void ExpectSameResults(const Graph& graph, const Graph& optimised, const std::vector<Tensor>& inputs) {
  auto expected = RunGraph(graph, DefaultKernelRegistry(), inputs);
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto actual = RunGraph(optimised, DefaultKernelRegistry(), inputs);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < expected->size(); ++i) {
    ASSERT_EQ((*actual)[i].shape(), (*expected)[i].shape()) << "output " << i;
    EXPECT_LE(MaxAbsDifference((*actual)[i], (*expected)[i]), 1e-5) << "output " << i;
  }
}

Tensor Ids(std::vector<int64_t> shape, int64_t vocab) {
  Tensor t = *Tensor::Create(ElementType::kInt64, shape);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<int64_t>()[i] = (i * 7 + 3) % vocab;
  return t;
}

// The GPT-2 lm_head of a tied checkpoint: logits = MatMul(h, Transpose(wte)),
// with wte also read by the embedding Gather. Its 1.3 MB are above constant
// folding's budget for a new copy, as every real vocabulary is.
constexpr int64_t kVocab = 5003;
std::unique_ptr<Graph> TiedEmbeddingGraph() {
  GraphBuilder b;
  Value* ids = b.Input("input_ids", ElementType::kInt64, Dims({"batch", "seq"}));
  Value* wte = b.Constant("wte", PseudoRandom({kVocab, 64}, 5));
  Value* h = b.Node("Gather", {wte, ids}, {}, "embed");
  Value* t = b.Node("Transpose", {wte}, Attrs({{"perm", std::vector<int64_t>{1, 0}}}), "lm_head_T");
  Value* logits = b.Node("MatMul", {h, t}, {}, "lm_head");
  b.Output(logits);
  return b.Build();
}

// MatMul(a, Transpose(w)) of two graph inputs, optimised: {graph, optimised}.
std::pair<std::unique_ptr<Graph>, std::unique_ptr<Graph>> InputProduct(SymbolicShape a_shape, SymbolicShape w_shape) {
  GraphBuilder b;
  Value* a = b.Input("a", ElementType::kFloat32, std::move(a_shape));
  Value* w = b.Input("w", ElementType::kFloat32, std::move(w_shape));
  Value* wt = b.Node("Transpose", {w}, Attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  b.Output(b.Node("MatMul", {a, wt}));
  auto graph = b.Build();
  auto optimised = graph->Clone();
  EXPECT_TRUE(Optimise(*optimised).ok());
  return {std::move(graph), std::move(optimised)};
}

TEST(TransposedMatMul, TiedEmbeddingIsReadInPlace) {
  auto graph = TiedEmbeddingGraph();
  auto optimised = graph->Clone();
  ASSERT_TRUE(Optimise(*optimised).ok());
  EXPECT_EQ(CountOps(*optimised, "Transpose"), 0);
  EXPECT_EQ(CountOps(*optimised, "MatMul"), 0);
  ASSERT_EQ(CountOps(*optimised, "FusedMatMul"), 1);
  // The embedding is held once: no transposed copy was folded.
  int constants = 0;
  for (const Node* n : optimised->nodes())
    for (const Value* in : n->inputs()) constants += in != nullptr && in->is_constant();
  EXPECT_EQ(constants, 2);  // wte, read by the Gather and by the product
  const Node* fused = optimised->FindNode("lm_head");
  ASSERT_NE(fused, nullptr);  // the fused node keeps the MatMul's name
  EXPECT_EQ(fused->domain(), "attune");
  EXPECT_EQ(fused->input(1)->name(), "wte");
  ASSERT_EQ(optimised->outputs().size(), 1u);
  EXPECT_EQ(optimised->outputs()[0]->name(), graph->outputs()[0]->name());
  ExpectSameResults(*graph, *optimised, {Ids({2, 5}, kVocab)});
  ExpectSameResults(*graph, *optimised, {Ids({1, 1}, kVocab)});
}

// K·ᵀ of an attention the fusion leaves alone (no softmax here), batched and broadcast.
TEST(TransposedMatMul, BatchedAndBroadcastOperands) {
  for (const std::vector<int64_t>& k_shape : {std::vector<int64_t>{2, 3, 7, 8}, std::vector<int64_t>{1, 3, 7, 8},
                                              std::vector<int64_t>{7, 8}}) {
    GraphBuilder b;
    Value* q = b.Input("q", ElementType::kFloat32, Dims({2, 3, 5, 8}));
    SymbolicShape ks;
    for (int64_t d : k_shape) ks.push_back(Dim::Known(d));
    Value* k = b.Input("k", ElementType::kFloat32, ks);
    std::vector<int64_t> perm(k_shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<int64_t>(i);
    std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
    Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", perm}}));
    b.Output(b.Node("MatMul", {q, kt}));
    auto graph = b.Build();
    auto optimised = graph->Clone();
    ASSERT_TRUE(Optimise(*optimised).ok());
    EXPECT_EQ(CountOps(*optimised, "FusedMatMul"), 1) << ShapeToString(k_shape);
    EXPECT_EQ(CountOps(*optimised, "Transpose"), 0);
    ExpectSameResults(*graph, *optimised, {PseudoRandom({2, 3, 5, 8}, 1), PseudoRandom(k_shape, 2)});
  }
}

// Up to kGemvMaxRowsOfA rows run as dot products over B's rows: K with a tail
// (70 is not a multiple of the 16 lanes), at one and two threads.
TEST(TransposedMatMul, FewRowsAsDotProducts) {
  for (int64_t rows : {1, 3, 4, 5, 9, 16}) {
    auto [graph, optimised] = InputProduct(Dims({1, "rows", 70}), Dims({4099, 70}));
    ASSERT_EQ(CountOps(*optimised, "FusedMatMul"), 1);
    ExpectSameResults(*graph, *optimised, {PseudoRandom({1, rows, 70}, 10), PseudoRandom({4099, 70}, 9)});
  }
}

// Past kGemvMaxRowsOfA (and from kGemmTransposedMinRows) rows B is transposed
// panel by panel (gemm_transposed.h) on AVX-512 machines, else read through
// oneDNN's strides.
TEST(TransposedMatMul, ManyRowsThroughTransposedPanels) {
  for (int64_t rows : {17, 23, 130}) {
    auto [graph, optimised] = InputProduct(Dims({1, "rows", 70}), Dims({4099, 70}));
    ASSERT_EQ(CountOps(*optimised, "FusedMatMul"), 1);
    ExpectSameResults(*graph, *optimised, {PseudoRandom({1, rows, 70}, 11), PseudoRandom({4099, 70}, 12)});
  }
}

TEST(TransposedMatMul, OtherPermutationsStay) {
  // (0, 2, 3, 1) moves an axis into the matrix; (1, 0, 2, 3) swaps batch axes.
  struct Case {
    std::vector<int64_t> perm;
    std::vector<int64_t> k_shape;
  };
  for (const Case& c : {Case{{0, 2, 3, 1}, {2, 7, 3, 8}}, Case{{1, 0, 2, 3}, {3, 2, 8, 7}}}) {
    GraphBuilder b;
    Value* q = b.Input("q", ElementType::kFloat32, Dims({2, 3, 5, 8}));
    SymbolicShape ks;
    for (int64_t d : c.k_shape) ks.push_back(Dim::Known(d));
    Value* k = b.Input("k", ElementType::kFloat32, ks);
    b.Output(b.Node("MatMul", {q, b.Node("Transpose", {k}, Attrs({{"perm", c.perm}}))}));
    auto graph = b.Build();
    auto optimised = graph->Clone();
    ASSERT_TRUE(Optimise(*optimised).ok());
    EXPECT_EQ(CountOps(*optimised, "FusedMatMul"), 0) << ShapeToString(c.perm);
    EXPECT_EQ(CountOps(*optimised, "Transpose"), 1);
    ExpectSameResults(*graph, *optimised, {PseudoRandom({2, 3, 5, 8}, 3), PseudoRandom(c.k_shape, 4)});
  }
}

// A transposed value that something else reads too is still computed for it.
TEST(TransposedMatMul, SharedTransposeStaysForItsOtherReader) {
  GraphBuilder b;
  Value* a = b.Input("a", ElementType::kFloat32, Dims({4, 6}));
  Value* w = b.Input("w", ElementType::kFloat32, Dims({5, 6}));
  Value* wt = b.Node("Transpose", {w}, Attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  b.Output(b.Node("MatMul", {a, wt}));
  b.Output(b.Node("Relu", {wt}));
  auto graph = b.Build();
  auto optimised = graph->Clone();
  ASSERT_TRUE(Optimise(*optimised).ok());
  EXPECT_EQ(CountOps(*optimised, "FusedMatMul"), 1);
  EXPECT_EQ(CountOps(*optimised, "Transpose"), 1);
  ExpectSameResults(*graph, *optimised, {PseudoRandom({4, 6}, 5), PseudoRandom({5, 6}, 6)});
}

// A product whose shapes do not fit fails fused as it fails unfused.
TEST(TransposedMatMul, MismatchedInnerDimsStillFail) {
  auto [graph, optimised] = InputProduct(Dims({"m", "k"}), Dims({"n", "k2"}));
  ASSERT_EQ(CountOps(*optimised, "FusedMatMul"), 1);
  const std::vector<Tensor> bad = {PseudoRandom({4, 6}, 7), PseudoRandom({5, 3}, 8)};
  auto unfused = RunGraph(*graph, DefaultKernelRegistry(), bad);
  auto fused = RunGraph(*optimised, DefaultKernelRegistry(), bad);
  EXPECT_EQ(unfused.status().code(), absl::StatusCode::kInvalidArgument) << unfused.status();
  EXPECT_EQ(fused.status().code(), absl::StatusCode::kInvalidArgument) << fused.status();
}

// --save-optimized writes standard ONNX: MatMul(A, Transpose(B)) again.
TEST(TransposedMatMul, ExportWritesTransposeAndMatMul) {
  auto graph = TiedEmbeddingGraph();
  auto optimised = graph->Clone();
  ASSERT_TRUE(Optimise(*optimised).ok());
  const std::string path = BinaryDir() + "/transposed_matmul_export.onnx";
  ASSERT_TRUE(ExportOptimizedModelToFile(*optimised, path).ok());
  auto reread = ImportModelFromFile(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(reread.ok()) << reread.status();
  EXPECT_EQ(CountOps(**reread, "FusedMatMul"), 0);
  EXPECT_EQ(CountOps(**reread, "MatMul"), 1);
  EXPECT_EQ(CountOps(**reread, "Transpose"), 1);
  EXPECT_EQ((*reread)->OpsetFor("attune"), 0) << "a model with no attune op imports no attune domain";
  ExpectSameResults(*graph, **reread, {Ids({2, 4}, kVocab)});
}

}  // namespace
}  // namespace attune::testing
