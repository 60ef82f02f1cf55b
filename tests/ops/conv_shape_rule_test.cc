// Conv's shape rule (engine/passes/shape_rules/conv.cc) through the shape
// inference pass: numbers where X's spatial dims are numbers, expressions of
// the symbol under stride 1, a fresh symbol under a larger stride, and
// batch and channels from X and W.
#include <gtest/gtest.h>

#include "absl/strings/match.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/passes.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;
using Ints = std::vector<int64_t>;

std::string ShapeOf(const Value* v) {
  return v->shape() ? SymbolicShapeToString(*v->shape()) : std::string("unknown rank");
}

void Infer(Graph& graph) {
  std::unique_ptr<Pass> pass = MakeShapeInferencePass();
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  absl::StatusOr<bool> changed = pass->Run(graph, context);
  ASSERT_TRUE(changed.ok()) << changed.status();
}

Value* Weights(GraphBuilder& b, const std::string& name, std::vector<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return b.Constant(name, Floats(std::move(shape), std::vector<float>(n, 0.5f)));
}

TEST(ConvShapeRuleTest, WhisperFrontEnd) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 80, "frames"}));
  Value* c1 = b.Node("Conv", {x, Weights(b, "w1", {384, 80, 3}), Weights(b, "b1", {384})},
                     Attrs({{"pads", Ints{1, 1}}}), "conv1");
  Value* c2 = b.Node("Conv", {c1, Weights(b, "w2", {384, 384, 3})},
                     Attrs({{"pads", Ints{1, 1}}, {"strides", Ints{2}}}), "conv2");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(c1), "[batch, 384, frames]");
  ASSERT_TRUE(c2->shape().has_value());
  const SymbolicShape& s = *c2->shape();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].ToString(), "batch");
  EXPECT_EQ(s[1].ToString(), "384");
  // ceil(frames / 2) is no polynomial: a fresh symbol, not frames.
  EXPECT_TRUE(s[2].is_symbol());
  EXPECT_TRUE(absl::StartsWith(s[2].symbol(), "unk__")) << s[2].ToString();
}

TEST(ConvShapeRuleTest, StrideOneKeepsTheSymbol) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 4, "t"}));
  Value* w = Weights(b, "w", {6, 4, 3});
  Value* valid = b.Node("Conv", {x, w}, Attrs({{"dilations", Ints{2}}}), "valid");  // no pads: t - 4
  Value* auto_valid = b.Node("Conv", {x, w}, Attrs({{"auto_pad", std::string("VALID")}}), "auto_valid");
  Value* same = b.Node("Conv", {x, w}, Attrs({{"auto_pad", std::string("SAME_LOWER")}}), "same");
  Value* asym = b.Node("Conv", {x, w}, Attrs({{"pads", Ints{2, 0}}}), "asym");  // t + 2 - 3 + 1
  Value* wider = b.Node("Conv", {x, w}, Attrs({{"pads", Ints{3, 2}}}), "wider");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(valid), "[batch, 6, t-4]");
  EXPECT_EQ(ShapeOf(auto_valid), "[batch, 6, t-2]");
  EXPECT_EQ(ShapeOf(same), "[batch, 6, t]");
  EXPECT_EQ(ShapeOf(asym), "[batch, 6, t]");
  EXPECT_EQ(ShapeOf(wider), "[batch, 6, t+3]");
}

TEST(ConvShapeRuleTest, NumbersAsTheKernelComputesThem) {
  GraphBuilder b;
  Value* image = b.Input("image", kF32, Dims({"batch", 3, 224, 224}));
  Value* vit = b.Node("Conv", {image, Weights(b, "patch", {32, 3, 16, 16})}, Attrs({{"strides", Ints{16, 16}}}));
  Value* clip = b.Node("Conv", {image, Weights(b, "patch14", {32, 3, 14, 14})},
                       Attrs({{"strides", Ints{14, 14}}, {"kernel_shape", Ints{14, 14}}}));
  Value* audio = b.Input("audio", kF32, Dims({1, 1, 16000}));
  Value* wav2vec = b.Node("Conv", {audio, Weights(b, "fe0", {16, 1, 10})}, Attrs({{"strides", Ints{5}}}));
  Value* same = b.Node("Conv", {image, Weights(b, "dw", {3, 1, 4, 4})},
                       Attrs({{"strides", Ints{3, 3}}, {"group", int64_t{3}}, {"auto_pad", std::string("SAME_UPPER")}}));
  Value* volume = b.Input("volume", kF32, Dims({2, 4, 9, 8, 7}));
  Value* v3d = b.Node("Conv", {volume, Weights(b, "w3", {6, 2, 3, 3, 2})},
                      Attrs({{"group", int64_t{2}}, {"strides", Ints{2, 1, 3}}, {"pads", Ints{1, 0, 0, 1, 0, 0}}}));
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(vit), "[batch, 32, 14, 14]");
  EXPECT_EQ(ShapeOf(clip), "[batch, 32, 16, 16]");
  EXPECT_EQ(ShapeOf(wav2vec), "[1, 16, 3199]");
  EXPECT_EQ(ShapeOf(same), "[batch, 3, 75, 75]");
  EXPECT_EQ(ShapeOf(v3d), "[2, 6, 5, 6, 2]");
}

TEST(ConvShapeRuleTest, WeightsOfUnknownSizeAndBadNodes) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 8, 20}));
  Value* w = b.Input("w", kF32, Dims({"m", 8, "k"}));
  Value* known_kernel = b.Node("Conv", {x, w}, Attrs({{"kernel_shape", Ints{5}}}), "known_kernel");
  Value* unknown_kernel = b.Node("Conv", {x, w}, {}, "unknown_kernel");
  // The kernel is longer than the input: the rule refuses, the kernel reports it at run time.
  Value* too_long = b.Node("Conv", {x, Weights(b, "long", {2, 8, 30})}, {}, "too_long");
  Value* bad_group = b.Node("Conv", {x, Weights(b, "g", {2, 8, 3})}, Attrs({{"group", int64_t{3}}}), "bad_group");
  Value* bad_kernel_shape =
      b.Node("Conv", {x, Weights(b, "k", {2, 8, 3})}, Attrs({{"kernel_shape", Ints{5}}}), "bad_kernel_shape");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(known_kernel), "[batch, m, 16]");
  ASSERT_TRUE(unknown_kernel->shape().has_value());
  EXPECT_EQ((*unknown_kernel->shape())[1].ToString(), "m");
  EXPECT_TRUE(absl::StartsWith((*unknown_kernel->shape())[2].symbol(), "unk__"));
  EXPECT_EQ(ShapeOf(too_long), "unknown rank");
  EXPECT_EQ(ShapeOf(bad_group), "unknown rank");
  EXPECT_EQ(ShapeOf(bad_kernel_shape), "unknown rank");
}

}  // namespace
}  // namespace attune::testing
