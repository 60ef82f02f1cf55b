// skip_norm_fusion: the residual Add folded into the norm that reads it, as
// GPT-2 (LayerNormalization, the sum read on by the next residual) and LLaMA
// (RMSNormalization) write their blocks; the fused graph gives the unfused
// graph's bits, NaN and infinities included, whether or not the sum is read
// further on; the misses with their reasons; the export back to Add + norm.
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/fusion/fuse_and_compare.h"

namespace attune::testing {
namespace {

constexpr int64_t kModel = 48;

// hidden = x + attn; out = hidden + mlp(norm(hidden)); final = norm(out):
// the first sum is read on by the second residual, the last one only by its norm.
std::unique_ptr<Graph> ResidualBlock(const std::string& norm, ElementType type = ElementType::kFloat32) {
  GraphBuilder b(norm == "RMSNormalization" ? 23 : 17);
  Value* x = b.Input("x", type, Dims({"batch", "seq", kModel}));
  Value* attn = b.Input("attn", type, Dims({"batch", "seq", kModel}));
  auto param = [&](const std::string& name, uint32_t seed) {
    Value* p = b.Constant(name, PseudoRandom({kModel}, seed));
    return type == ElementType::kFloat32 ? p : b.Node("Cast", {p}, Attrs({{"to", static_cast<int64_t>(type)}}));
  };
  auto normed = [&](Value* h, uint32_t seed) {
    std::vector<Value*> inputs = {h, param(absl::StrCat("scale", seed), seed)};
    if (norm == "LayerNormalization") inputs.push_back(param(absl::StrCat("bias", seed), seed + 1));
    return b.Node(norm, inputs, Attrs({{"epsilon", 1e-5f}}));
  };
  Value* hidden = b.Node("Add", {x, attn});
  Value* mlp = b.Node("Tanh", {normed(hidden, 10)});
  Value* out = b.Node("Add", {mlp, hidden});
  b.Output(normed(out, 20));
  return b.Build();
}

std::vector<Tensor> Inputs(int64_t seq) {
  Tensor x = PseudoRandom({2, seq, kModel}, 1), attn = PseudoRandom({2, seq, kModel}, 2);
  x.data<float>()[5] = std::numeric_limits<float>::quiet_NaN();
  attn.data<float>()[kModel + 3] = std::numeric_limits<float>::infinity();
  return {x, attn};
}

int Count(const FusionReport& report, const std::string& pattern) {
  int n = 0;
  for (const OpFusionRecord& f : report.op_fusions) n += f.pattern == pattern;
  return n;
}

TEST(SkipNormFusion, ResidualAndNormGiveTheSubgraphsBits) {
  for (const std::string norm : {"LayerNormalization", "RMSNormalization"})
    for (int64_t seq : {1, 9, 300}) {
      auto original = ResidualBlock(norm);
      ExpectSameOutputs(*original, *FusedGraph(original->Clone()), Inputs(seq));
      const FusedComparison r = FuseAndCompare(ResidualBlock(norm), Inputs(seq));
      EXPECT_EQ(Count(r.report, norm == "RMSNormalization" ? "skip_rms_norm" : "skip_layer_norm"), 2) << norm;
      EXPECT_TRUE(r.report.rejected.empty()) << r.report.rejected[0].reason;
    }
  auto graph = FusedGraph(ResidualBlock("LayerNormalization"));
  EXPECT_EQ(CountOps(*graph, "SkipLayerNormalization"), 2);
  EXPECT_EQ(CountOps(*graph, "Add"), 0);
  EXPECT_EQ(CountOps(*graph, "LayerNormalization"), 0);
}

TEST(SkipNormFusion, Float16SumsRoundAsTheAddDoes) {
  auto original = ResidualBlock("LayerNormalization", ElementType::kFloat16);
  FusionReport report;
  auto graph = FusedGraph(original->Clone(), &report);
  EXPECT_EQ(Count(report, "skip_layer_norm"), 2);
  std::vector<Tensor> inputs;
  for (const Tensor& t : Inputs(7)) {
    Tensor h = *Tensor::Create(ElementType::kFloat16, t.shape());
    for (int64_t i = 0; i < t.num_elements(); ++i) h.data<Float16>()[i] = FloatToHalf(t.data<float>()[i] * 300.0f);
    inputs.push_back(h);
  }
  ExpectSameOutputs(*original, *graph, inputs);
}

// GPT-2's wte + wpe: the position embedding [1, seq, d] repeats over the
// batch, either way round.
TEST(SkipNormFusion, PositionEmbeddingRepeatsOverTheBatch) {
  for (bool pos_first : {false, true}) {
    GraphBuilder b(17);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", kModel}));
    Value* pos = b.Input("pos", ElementType::kFloat32, Dims({1, "seq", kModel}));
    Value* scale = b.Constant("scale", PseudoRandom({kModel}, 3));
    Value* sum = b.Node("Add", pos_first ? std::vector<Value*>{pos, x} : std::vector<Value*>{x, pos});
    b.Output(b.Node("LayerNormalization", {sum, scale}));
    b.Output(b.Node("Tanh", {sum}));
    auto graph = b.Build();
    FusionReport report;
    auto fused = FusedGraph(graph->Clone(), &report);
    EXPECT_EQ(Count(report, "skip_layer_norm"), 1);
    ExpectSameOutputs(*graph, *fused, {PseudoRandom({3, 5, kModel}, 4), PseudoRandom({1, 5, kModel}, 5)});
  }
}

// A bias Add (broadcast within the normalized dims) and a norm whose
// statistics are read stay, with their reasons.
TEST(SkipNormFusion, MissesSayWhy) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", kModel}));
  Value* bias = b.Input("bias", ElementType::kFloat32, Dims({"batch", "seq", 1}));
  Value* scale = b.Constant("scale", PseudoRandom({kModel}, 3));
  b.Output(b.Node("LayerNormalization", {b.Node("Add", {x, bias}), scale}));
  std::vector<Value*> stats = b.Nodes("LayerNormalization", {b.Node("Add", {x, x}), scale}, 2);
  b.Output(stats[0]);
  b.Output(stats[1]);
  const FusedComparison r =
      FuseAndCompare(b.Build(), {PseudoRandom({2, 4, kModel}, 4), PseudoRandom({2, 4, 1}, 5)});
  EXPECT_EQ(r.error, 0.0);
  EXPECT_EQ(Count(r.report, "skip_layer_norm"), 0);
  ASSERT_EQ(r.report.rejected.size(), 2u);
  std::string reasons = r.report.rejected[0].reason + " | " + r.report.rejected[1].reason;
  EXPECT_TRUE(absl::StrContains(reasons, "the Add's operands 'x' [batch, seq, 48] and 'bias' [batch, seq, 1] are "
                                         "not the sum's shape"))
      << reasons;
  EXPECT_TRUE(absl::StrContains(reasons, "has its output 1")) << reasons;
}

TEST(SkipNormFusion, ExportWritesTheAddAndTheNorm) {
  for (const std::string norm : {"LayerNormalization", "RMSNormalization"}) {
    auto graph = ResidualBlock(norm);
    auto optimised = FusedGraph(graph->Clone());
    auto reread = ExportedAndReread(*optimised, "skip_norm_export.onnx");
    ASSERT_NE(reread, nullptr);
    EXPECT_EQ(reread->OpsetFor("attune"), 0);
    EXPECT_EQ(CountOps(*reread, "Add"), 2);
    EXPECT_EQ(CountOps(*reread, norm), 2);
    ExpectSameOutputs(*graph, *reread, Inputs(3));
  }
}

}  // namespace
}  // namespace attune::testing
