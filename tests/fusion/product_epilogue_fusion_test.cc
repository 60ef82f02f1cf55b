// product_epilogue_fusion: an activation folded into the product it reads,
// and SwiGLU's Mul with it, in the forms Hugging Face models export: GPT-2's
// Conv1D (addmm on the flattened rows, a Reshape back, gelu_new), LLaMA's MLP
// (down(silu(gate(x)) * up(x))), a tied head that stays bare. Each fused
// graph against the unfused one; the misses with their reasons; the export
// back to standard ONNX.
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/fusion/fuse_and_compare.h"
#include "tests/fusion/op_fusion_graphs.h"

namespace attune::testing {
namespace {

constexpr int64_t kModel = 32, kHidden = 96;

// GPT2MLP: c_proj(gelu_new(c_fc(x))), each Conv1D an addmm on x.view(-1, nx)
// viewed back to [batch, seq, n].
std::unique_ptr<Graph> Gpt2Mlp(ElementType type = ElementType::kFloat32) {
  GraphBuilder b(17);
  Value* x = b.Input("x", type, Dims({"batch", "seq", kModel}));
  auto conv1d = [&](Value* in, int64_t nx, int64_t nf, uint32_t seed) {
    Value* rows = b.Node("Reshape", {in, b.Constant(absl::StrCat("rows", seed), Int64s({-1, nx}))});
    Value* w = b.Constant(absl::StrCat("w", seed), PseudoRandom({nx, nf}, seed));
    Value* bias = b.Constant(absl::StrCat("b", seed), PseudoRandom({nf}, seed + 1));
    if (type != ElementType::kFloat32) {
      w = b.Node("Cast", {w}, Attrs({{"to", static_cast<int64_t>(type)}}));
      bias = b.Node("Cast", {bias}, Attrs({{"to", static_cast<int64_t>(type)}}));
    }
    Value* y = b.Node("Gemm", {rows, w, bias});
    Value* shape = b.Node("Concat", {b.Node("Slice", {b.Node("Shape", {in}), b.Constant(absl::StrCat("s0", seed), Int64s({0})),
                                                      b.Constant(absl::StrCat("s1", seed), Int64s({-1}))}),
                                     b.Constant(absl::StrCat("n", seed), Int64s({nf}))},
                          Attrs({{"axis", int64_t{0}}}));
    return b.Node("Reshape", {y, shape});
  };
  b.Output(conv1d(GeluNew(b, conv1d(x, kModel, kHidden, 10), x->type()), kHidden, kModel, 20));
  return b.Build();
}

// LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x)), silu as x·sigmoid(x).
// `up_shape` other than x's broadcasts the up projection (a miss).
std::unique_ptr<Graph> LlamaMlp(bool broadcast_up = false) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", kModel}));
  Value* gate = b.Node("MatMul", {x, b.Constant("gate", PseudoRandom({kModel, kHidden}, 30))}, {}, "gate_proj");
  Value* act = b.Node("Mul", {gate, b.Node("Sigmoid", {gate})});
  Value* up = broadcast_up ? b.Constant("up", PseudoRandom({1, 1, kHidden}, 31))
                           : b.Node("MatMul", {x, b.Constant("up", PseudoRandom({kModel, kHidden}, 31))}, {}, "up_proj");
  Value* down = b.Node("MatMul", {b.Node("Mul", {act, up}), b.Constant("down", PseudoRandom({kHidden, kModel}, 32))});
  b.Output(down);
  return b.Build();
}

// BLOOM's, GPT-J's and DistilBERT's MLP: each Linear on [batch, seq, d]
// exported as MatMul and an Add of its bias (either operand order).
std::unique_ptr<Graph> LinearMlp() {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", kModel}));
  Value* h = b.Node("Add", {b.Node("MatMul", {x, b.Constant("w1", PseudoRandom({kModel, kHidden}, 40))}),
                            b.Constant("b1", PseudoRandom({kHidden}, 41))});
  Value* g = GeluNew(b, h, ElementType::kFloat32);
  b.Output(b.Node("Add", {b.Constant("b2", PseudoRandom({kModel}, 43)),
                          b.Node("MatMul", {g, b.Constant("w2", PseudoRandom({kHidden, kModel}, 42))})}));
  return b.Build();
}

const OpFusionRecord* FindFusion(const FusionReport& report, const std::string& pattern) {
  for (const OpFusionRecord& f : report.op_fusions)
    if (f.pattern == pattern) return &f;
  return nullptr;
}

TEST(ProductEpilogueFusion, Gpt2ConvOneDGeluFoldsIntoTheGemm) {
  for (int64_t seq : {1, 7, 40}) {
    const FusedComparison r = FuseAndCompare(Gpt2Mlp(), {PseudoRandom({2, seq, kModel}, 1)});
    // Gelu against the written-out chain (gelu_fusion_test.cc bounds that); the
    // product and the epilogue add no difference of their own (matmul_epilogue_test.cc).
    EXPECT_LE(r.error, 1e-5) << "seq " << seq;
    const OpFusionRecord* f = FindFusion(r.report, "product_activation");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->op, "FusedGemm");
    EXPECT_EQ(f->attributes, "Gelu(approximate=tanh)");
  }
  auto optimised = FusedGraph(Gpt2Mlp());
  EXPECT_EQ(CountOps(*optimised, "FusedGemm"), 1);
  EXPECT_EQ(CountOps(*optimised, "Gemm"), 1);  // c_proj: nothing to fold
  EXPECT_EQ(CountOps(*optimised, "Gelu"), 0);
  EXPECT_EQ(CountOps(*optimised, "Tanh"), 0);
}

TEST(ProductEpilogueFusion, LlamaSwiGluFoldsIntoTheGateProduct) {
  for (int64_t seq : {1, 3, 5, 33}) {
    const FusedComparison r = FuseAndCompare(LlamaMlp(), {PseudoRandom({1, seq, kModel}, 2)});
    EXPECT_EQ(r.error, 0.0) << "seq " << seq;
    const OpFusionRecord* f = FindFusion(r.report, "swiglu");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->op, "FusedMatMul");
    EXPECT_EQ(f->attributes, "Swish(alpha=1) x multiplier");
    EXPECT_TRUE(r.report.rejected.empty()) << r.report.rejected[0].reason;
  }
  auto optimised = FusedGraph(LlamaMlp());
  EXPECT_EQ(CountOps(*optimised, "FusedMatMul"), 1);
  EXPECT_EQ(CountOps(*optimised, "MatMul"), 2);  // up and down
  EXPECT_EQ(CountOps(*optimised, "Mul"), 0);
  EXPECT_EQ(CountOps(*optimised, "Swish"), 0);
}

TEST(ProductEpilogueFusion, LinearBiasesFoldWithTheirActivation) {
  for (int64_t seq : {1, 6, 40}) {
    const FusedComparison r = FuseAndCompare(LinearMlp(), {PseudoRandom({2, seq, kModel}, 8)});
    EXPECT_LE(r.error, 1e-5) << "seq " << seq;  // Gelu against the written-out chain
    const OpFusionRecord* f = FindFusion(r.report, "product_activation");
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->attributes, "bias + Gelu(approximate=tanh)");
    ASSERT_NE(FindFusion(r.report, "product_bias"), nullptr);
    EXPECT_TRUE(r.report.rejected.empty()) << r.report.rejected[0].reason;
  }
  auto optimised = FusedGraph(LinearMlp());
  EXPECT_EQ(CountOps(*optimised, "FusedMatMul"), 2);
  EXPECT_EQ(CountOps(*optimised, "MatMul"), 0);
  EXPECT_EQ(CountOps(*optimised, "Add"), 0);
  EXPECT_EQ(CountOps(*optimised, "Gelu"), 0);
  // A bias alone: the product's bits and the Add's.
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", kModel}));
  b.Output(b.Node("Add", {b.Node("MatMul", {x, b.Constant("w", PseudoRandom({kModel, kHidden}, 44))}),
                          b.Constant("bias", PseudoRandom({1, 1, kHidden}, 45))}));
  auto graph = b.Build();
  auto fused = FusedGraph(graph->Clone());
  EXPECT_EQ(CountOps(*fused, "Add"), 0);
  ExpectSameOutputs(*graph, *fused, {PseudoRandom({3, 5, kModel}, 9)});
}

// Up broadcast over the rows: the Mul stays (with its reason), the Swish folds.
TEST(ProductEpilogueFusion, ABroadcastMultiplierKeepsTheMul) {
  const FusedComparison r = FuseAndCompare(LlamaMlp(/*broadcast_up=*/true), {PseudoRandom({1, 6, kModel}, 3)});
  EXPECT_EQ(r.error, 0.0);
  ASSERT_NE(FindFusion(r.report, "product_activation"), nullptr);
  EXPECT_EQ(FindFusion(r.report, "swiglu"), nullptr);
  ASSERT_EQ(r.report.rejected.size(), 1u);
  EXPECT_EQ(r.report.rejected[0].pattern, "swiglu");
  EXPECT_TRUE(absl::StrContains(r.report.rejected[0].reason, "is not of the product's shape")) << r.report.rejected[0].reason;
}

// A product read by more than its activation, and a float16 product, stay.
TEST(ProductEpilogueFusion, MissesSayWhy) {
  {
    GraphBuilder b(20);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({4, kModel}));
    Value* y = b.Node("MatMul", {x, b.Constant("w", PseudoRandom({kModel, kHidden}, 5))});
    b.Output(b.Node("Relu", {y}));
    b.Output(y);
    const FusedComparison r = FuseAndCompare(b.Build(), {PseudoRandom({4, kModel}, 6)});
    EXPECT_EQ(r.error, 0.0);
    EXPECT_TRUE(r.report.op_fusions.empty());
    ASSERT_EQ(r.report.rejected.size(), 1u);
    EXPECT_EQ(r.report.rejected[0].pattern, "product_activation");
    EXPECT_TRUE(absl::StrContains(r.report.rejected[0].reason, "graph output")) << r.report.rejected[0].reason;
  }
  {
    GraphBuilder b(20);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({4, kModel}));
    Value* y = b.Node("MatMul", {x, b.Constant("w", PseudoRandom({kModel, kHidden}, 5))});
    b.Output(b.Node("Add", {y, b.Constant("rows", PseudoRandom({4, kHidden}, 6))}));
    const FusedComparison r = FuseAndCompare(b.Build(), {PseudoRandom({4, kModel}, 6)});
    EXPECT_EQ(r.error, 0.0);
    ASSERT_EQ(r.report.rejected.size(), 1u);
    EXPECT_EQ(r.report.rejected[0].pattern, "product_bias");
    EXPECT_TRUE(absl::StrContains(r.report.rejected[0].reason, "is not one row of the product's [4, 96]"))
        << r.report.rejected[0].reason;
  }
  {
    FusionReport report;
    auto optimised = FusedGraph(Gpt2Mlp(ElementType::kFloat16), &report);
    EXPECT_EQ(CountOps(*optimised, "Gelu"), 1);
    // Float16 products over constant weights run as HalfWeightMatMul between
    // Casts (weight_compression), which the epilogue fusion does not take:
    // the float16 Gelu between them stays.
    EXPECT_EQ(CountOps(*optimised, "HalfWeightMatMul"), 2);
  }
}

// --save-optimized writes the product, the activation and the Mul again.
TEST(ProductEpilogueFusion, ExportWritesTheStandardOps) {
  {
    auto graph = LinearMlp();
    auto reread = ExportedAndReread(*FusedGraph(graph->Clone()), "product_bias_export.onnx");
    ASSERT_NE(reread, nullptr);
    EXPECT_EQ(CountOps(*reread, "MatMul"), 2);
    // Opset 17 has no Gelu: it is written out again (two Adds and a Tanh of its own).
    EXPECT_EQ(CountOps(*reread, "Add"), 2 + 2);
    EXPECT_EQ(CountOps(*reread, "Tanh"), 1);
    const Tensor x = PseudoRandom({2, 5, kModel}, 7);
    auto want = RunGraph(*graph, DefaultKernelRegistry(), {x});
    auto got = RunGraph(*reread, DefaultKernelRegistry(), {x});
    ASSERT_TRUE(want.ok() && got.ok());
    EXPECT_LE(MaxAbsDifference((*want)[0], (*got)[0]), 1e-5);
  }
  for (bool llama : {false, true}) {
    auto graph = llama ? LlamaMlp() : Gpt2Mlp();
    auto optimised = FusedGraph(graph->Clone());
    auto reread = ExportedAndReread(*optimised, "product_epilogue_export.onnx");
    ASSERT_NE(reread, nullptr);
    EXPECT_EQ(reread->OpsetFor("attune"), 0);
    EXPECT_EQ(CountOps(*reread, llama ? "MatMul" : "Gemm"), llama ? 3 : 2);
    const Tensor x = PseudoRandom({2, 5, kModel}, 7);
    auto want = RunGraph(*graph, DefaultKernelRegistry(), {x});
    auto got = RunGraph(*reread, DefaultKernelRegistry(), {x});
    ASSERT_TRUE(want.ok() && got.ok());
    EXPECT_LE(MaxAbsDifference((*want)[0], (*got)[0]), 1e-5);
  }
}

}  // namespace
}  // namespace attune::testing
