// conv_epilogue_fusion and conv_layout: a residual Add and an activation
// folded into the Conv they read (attune.FusedConv), and convolution outputs
// read only by convolutions kept channels last. In the shapes of ResNet's
// bottleneck and MobileNetV3's inverted residual, each fused graph against
// the unfused one on 1, 2 and 3 threads, with NaN and ±inf in the input;
// the misses with their reasons; the export back to standard ONNX.
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/exec/plan.h"
#include "tests/common/torch_export_graphs.h"
#include "tests/fusion/fuse_and_compare.h"

namespace attune::testing {
namespace {

constexpr int64_t kChannels = 16, kSide = 9;

absl::StatusOr<std::vector<Tensor>> RunOn(const Graph& graph, const std::vector<Tensor>& inputs, int threads) {
  ExecOptions options;
  options.threads = threads;
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Plan::Compile(graph, DefaultKernelRegistry(), options));
  return plan->Run(inputs);
}

// conv(x) with a bias, kernel k, `group` groups, padding to keep the size.
Value* Conv(GraphBuilder& b, Value* x, int64_t in, int64_t out, int64_t k, int64_t group, uint32_t seed) {
  const int64_t pad = k / 2;
  Value* w = b.Constant(absl::StrCat("w", seed), PseudoRandom({out, in / group, k, k}, seed));
  Value* bias = b.Constant(absl::StrCat("b", seed), PseudoRandom({out}, seed + 1));
  return b.Node("Conv", {x, w, bias},
                Attrs({{"group", group}, {"pads", std::vector<int64_t>{pad, pad, pad, pad}},
                       {"kernel_shape", std::vector<int64_t>{k, k}}}));
}

// ResNet's bottleneck twice: 1x1, 3x3, 1x1 convolutions, Relu between, the
// residual Add and a Relu after; the first block's shortcut a 1x1 Conv.
std::unique_ptr<Graph> Bottlenecks() {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({1, kChannels, kSide, kSide}));
  Value* h = x;
  for (uint32_t block = 0; block < 2; ++block) {
    const uint32_t s = 100 * (block + 1);
    Value* a = b.Node("Relu", {Conv(b, h, kChannels, 8, 1, 1, s)});
    Value* c = b.Node("Relu", {Conv(b, a, 8, 8, 3, 1, s + 10)});
    Value* d = Conv(b, c, 8, kChannels, 1, 1, s + 20);
    Value* shortcut = block == 0 ? Conv(b, h, kChannels, kChannels, 1, 1, s + 30) : h;
    h = b.Node("Relu", {b.Node("Add", {d, shortcut})});
  }
  b.Output(b.Node("GlobalAveragePool", {h}));
  b.Output(h);
  return b.Build();
}

// An activation node on v: Clip(0, 6) with its bounds as inputs, LeakyRelu with alpha.
Value* Activation(GraphBuilder& b, const std::string& op, Value* v, uint32_t seed) {
  if (op == "Clip")
    return b.Node("Clip", {v, b.Constant(absl::StrCat("lo", seed), ScalarOf(0.0f)),
                           b.Constant(absl::StrCat("hi", seed), ScalarOf(6.0f))});
  if (op == "LeakyRelu") return b.Node(op, {v}, Attrs({{"alpha", 0.1f}}));
  return b.Node(op, {v});
}

// MobileNetV3's inverted residual: 1x1 expansion, depthwise 3x3, 1x1
// projection and the residual Add, with `op` after the first two.
std::unique_ptr<Graph> InvertedResidual(const std::string& op) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({1, kChannels, kSide, kSide}));
  Value* e = Activation(b, op, Conv(b, x, kChannels, 32, 1, 1, 1), 1);
  Value* d = Activation(b, op, Conv(b, e, 32, 32, 3, 32, 2), 2);
  b.Output(b.Node("Add", {x, Conv(b, d, 32, kChannels, 1, 1, 3)}));
  return b.Build();
}

// MobileNetV3's block with squeeze-and-excitation: expansion, depthwise,
// then GlobalAveragePool, two 1x1 convolutions, HardSigmoid and the scale
// Mul of the depthwise output, the projection and the residual Add.
std::unique_ptr<Graph> SqueezeExcite(int opset) {
  GraphBuilder b(opset);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({1, kChannels, kSide, kSide}));
  Value* e = b.Node("HardSwish", {Conv(b, x, kChannels, 32, 1, 1, 1)});
  Value* d = b.Node("HardSwish", {Conv(b, e, 32, 32, 3, 32, 2)});
  Value* squeezed = b.Node("Relu", {Conv(b, b.Node("GlobalAveragePool", {d}), 32, 8, 1, 1, 3)});
  Value* scale = b.Node("HardSigmoid", {Conv(b, squeezed, 8, 32, 1, 1, 4)}, Attrs({{"alpha", 1.0f / 6}}));
  b.Output(b.Node("Add", {x, Conv(b, b.Node("Mul", {scale, d}), 32, kChannels, 1, 1, 5)}));
  return b.Build();
}

// An input with NaN, +inf and -inf in it, and a finite one.
std::vector<Tensor> Inputs(bool nonfinite) {
  Tensor x = PseudoRandom({1, kChannels, kSide, kSide}, 7);
  for (float& v : x.values<float>()) v *= 4.0f;
  if (nonfinite) {
    x.values<float>()[3] = std::numeric_limits<float>::quiet_NaN();
    x.values<float>()[kSide * kSide + 40] = std::numeric_limits<float>::infinity();
    x.values<float>()[5 * kSide * kSide + 70] = -std::numeric_limits<float>::infinity();
  }
  std::vector<Tensor> inputs;
  inputs.push_back(std::move(x));
  return inputs;
}

// The fused graph's outputs against the original's on 1, 2 and 3 threads,
// NaN where it has NaN; `rtol` for oneDNN's own activation formulas, `atol`
// for sums in another order (a ReduceMean for a pool) in outputs that cancel.
void ExpectFusedMatches(const Graph& original, const Graph& fused, double rtol, double atol = 1e-6) {
  for (bool nonfinite : {false, true}) {
    const std::vector<Tensor> inputs = Inputs(nonfinite);
    auto want = RunOn(original, inputs, 1);
    ASSERT_TRUE(want.ok()) << want.status();
    for (int threads : {1, 2, 3}) {
      auto got = RunOn(fused, inputs, threads);
      ASSERT_TRUE(got.ok()) << got.status();
      ASSERT_EQ(got->size(), want->size());
      for (size_t o = 0; o < want->size(); ++o)
        EXPECT_EQ(CompareTensors((*got)[o], (*want)[o], Tolerance{rtol, atol}), "")
            << "output " << o << " threads " << threads << " nonfinite " << nonfinite;
    }
  }
}

int CountAttr(const Graph& graph, const std::string& name) {
  int n = 0;
  for (const Node* node : graph.nodes()) n += node->attributes().GetInt(name, 0).value_or(0) == 1;
  return n;
}

TEST(ConvEpilogueFusion, BottleneckFoldsResidualAndReluAndStaysChannelsLast) {
  auto original = Bottlenecks();
  FusionReport report;
  auto fused = FusedGraph(original->Clone(), &report);
  EXPECT_EQ(CountOps(*fused, "Relu"), 0);
  EXPECT_EQ(CountOps(*fused, "Add"), 0);
  // Seven convolutions; the shortcut's has no epilogue and stays a Conv.
  EXPECT_EQ(CountOps(*fused, "FusedConv"), 6);
  // Channels last inside each block: the blocks' outputs are read by the
  // pool and the graph output (the second), or are the residual of a
  // convolution that writes channels first (the first, and with it the
  // shortcut).
  EXPECT_EQ(CountAttr(*fused, "channels_last_output"), 4);
  for (const RejectedCandidate& r : report.rejected) ADD_FAILURE() << r.pattern << " at " << r.at << ": " << r.reason;
  ExpectFusedMatches(*original, *fused, 0.0);
  // Written back as Conv, Add and Relu (and Transposes for the layout).
  auto reread = ExportedAndReread(*fused, "conv_bottleneck_export.onnx");
  ASSERT_NE(reread, nullptr);
  EXPECT_EQ(CountOps(*reread, "FusedConv"), 0);
  EXPECT_EQ(CountOps(*reread, "Conv"), 7);
  EXPECT_EQ(reread->OpsetFor("attune"), 0);
  ExpectFusedMatches(*original, *reread, 0.0);
}

TEST(ConvEpilogueFusion, EachActivationMatchesTheUnfusedOp) {
  // Relu and Clip in the kernel's epilogue (oneDNN's would take NaN to a
  // bound); the others as oneDNN post-ops, within its formulas' rounding.
  for (const std::string op : {"Relu", "Clip", "LeakyRelu", "HardSwish", "Sigmoid", "Tanh"}) {
    SCOPED_TRACE(op);
    auto original = InvertedResidual(op);
    FusionReport report;
    auto fused = FusedGraph(original->Clone(), &report);
    EXPECT_EQ(CountOps(*fused, op), 0);
    EXPECT_EQ(CountOps(*fused, "FusedConv"), 3);
    ExpectFusedMatches(*original, *fused, op == "Relu" || op == "Clip" ? 0.0 : 1e-5);
    auto reread = ExportedAndReread(*fused, "conv_activation_export.onnx");
    ASSERT_NE(reread, nullptr);
    EXPECT_EQ(CountOps(*reread, op), 2);
    ExpectFusedMatches(*original, *reread, 0.0);
  }
}

TEST(ConvEpilogueFusion, SqueezeExcitationStaysChannelsLast) {
  for (int opset : {14, 18}) {  // ReduceMean's axes as an attribute, then as an input
    SCOPED_TRACE(opset);
    auto original = SqueezeExcite(opset);
    auto fused = FusedGraph(original->Clone());
    // The pool reads the depthwise output channels last, the scale Mul
    // writes its product so for the projection.
    EXPECT_EQ(CountOps(*fused, "GlobalAveragePool"), 0);
    EXPECT_EQ(CountOps(*fused, "ReduceMean"), 1);
    // Outputs channels last: expansion, depthwise (pool and Mul read it) and
    // the first 1x1 of the squeeze (the second reads it); inputs: the
    // depthwise, the second 1x1 and the projection (the Mul's product).
    EXPECT_EQ(CountAttr(*fused, "channels_last_output"), 3);
    EXPECT_EQ(CountAttr(*fused, "channels_last_input"), 3);
    // |x| up to 4 with outputs near 0: 1e-5 absolute is float32 rounding of the operands.
    ExpectFusedMatches(*original, *fused, 1e-5, 1e-5);
    auto reread = ExportedAndReread(*fused, "conv_squeeze_excite_export.onnx");
    ASSERT_NE(reread, nullptr);
    EXPECT_EQ(reread->OpsetFor("attune"), 0);
    ExpectFusedMatches(*original, *reread, 1e-5, 1e-5);
  }
}

TEST(ConvEpilogueFusion, ReluKeepsNaNAndTakesMinusInfinityToZero) {
  // One channel, a 1x1 kernel of weight 1: the Conv passes X through.
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({1, 1, 1, 4}));
  b.Output(b.Node("Relu", {b.Node("Conv", {x, b.Constant("w", Floats({1, 1, 1, 1}, {1.0f}))})}));
  auto fused = FusedGraph(b.Build());
  ASSERT_EQ(CountOps(*fused, "FusedConv"), 1);
  const float inf = std::numeric_limits<float>::infinity();
  auto y = RunOn(*fused, {Floats({1, 1, 1, 4}, {std::nanf(""), -inf, inf, -2.0f})}, 1);
  ASSERT_TRUE(y.ok()) << y.status();
  const auto v = (*y)[0].values<float>();
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_EQ(v[1], 0.0f);
  EXPECT_EQ(v[2], inf);
  EXPECT_EQ(v[3], 0.0f);
}

TEST(ConvEpilogueFusion, BroadcastAddIsAMissWithItsReason) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({1, kChannels, kSide, kSide}));
  Value* shift = b.Input("shift", ElementType::kFloat32, Dims({1, kChannels, 1, 1}));
  b.Output(b.Node("Add", {Conv(b, x, kChannels, kChannels, 1, 1, 9), shift}));
  FusionReport report;
  auto fused = FusedGraph(b.Build(), &report);
  EXPECT_EQ(CountOps(*fused, "Add"), 1);
  bool found = false;
  for (const RejectedCandidate& r : report.rejected)
    found |= r.pattern == "conv_residual" && absl::StrContains(r.reason, "is not of the Conv output's shape");
  EXPECT_TRUE(found);
}

TEST(ConvEpilogueFusion, FusedConvChecksItsResidual) {
  GraphBuilder b(17);
  b.graph().SetOpset("attune", 1);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({1, 2, 3, 3}));
  Value* z = b.Input("z", ElementType::kFloat32, Dims({1, 2, 3, 4}));
  Value* w = b.Constant("w", PseudoRandom({2, 2, 1, 1}, 3));
  Value* y = b.graph().AddValue("y", ElementType::kFloat32);
  b.graph().AddNode("FusedConv", "attune", "fused", {x, w, nullptr, z}, {y}, Attrs({{"activation", std::string("Relu")}}));
  b.Output(y);
  auto out = RunOn(b.graph(), {PseudoRandom({1, 2, 3, 3}, 1), PseudoRandom({1, 2, 3, 4}, 2)}, 1);
  ASSERT_FALSE(out.ok());
  EXPECT_TRUE(absl::StrContains(out.status().message(), "residual Z")) << out.status();
}

}  // namespace
}  // namespace attune::testing
