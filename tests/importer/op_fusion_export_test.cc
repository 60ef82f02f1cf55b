// Export of the op fusions' ops into models whose opset predates them: Gelu,
// Swish and RMSNormalization become the standard ops they are defined by,
// which compute the same outputs; at an opset that has them they stay.
#include <cmath>
#include <random>

#include "gtest/gtest.h"
#include "engine/passes/passes.h"
#include "importer/op_fusion_export.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

constexpr int64_t kFeatures = 8;

// x -> Gelu(tanh) -> Gelu(none) -> Swish(1.702) -> RMSNormalization(w) -> y.
std::unique_ptr<Graph> FusedOpsGraph(int opset, ElementType type) {
  GraphBuilder b(opset);
  Value* x = b.Input("x", type, Dims({"batch", kFeatures}));
  Value* y = b.Node("Gelu", {x}, Attrs({{"approximate", std::string("tanh")}}));
  y = b.Node("Gelu", {y});
  y = b.Node("Swish", {y}, Attrs({{"alpha", 1.702f}}));
  Tensor w = *Tensor::Create(type, {kFeatures});
  for (int64_t i = 0; i < kFeatures; ++i) {
    const float v = 0.5f + 0.1f * static_cast<float>(i);
    if (type == ElementType::kFloat16) w.data<Float16>()[i] = FloatToHalf(v);
    else w.data<float>()[i] = v;
  }
  Attributes norm = Attrs({{"epsilon", 1e-6f}, {"axis", int64_t{-1}}, {"stash_type", int64_t{1}}});
  b.Output(b.Node("RMSNormalization", {y, b.Constant("w", w)}, norm));
  std::unique_ptr<Graph> g = b.Build();
  // Types, as an optimised graph has them.
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  EXPECT_TRUE(MakeShapeInferencePass()->Run(*g, context).ok());
  return g;
}

Tensor Input(ElementType type) {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  Tensor t = *Tensor::Create(type, {16, kFeatures});
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const float v = i == 20 ? NAN : i == 41 ? INFINITY : normal(rng);
    if (type == ElementType::kFloat16) t.data<Float16>()[i] = FloatToHalf(v);
    else t.data<float>()[i] = v;
  }
  return t;
}

double At(const Tensor& t, int64_t i) {
  return t.type() == ElementType::kFloat16 ? HalfToFloat(t.data<Float16>()[i]) : t.data<float>()[i];
}

int FusedOps(const Graph& g) {
  return CountOps(g, "Gelu") + CountOps(g, "Swish") + CountOps(g, "RMSNormalization");
}

TEST(OpFusionExportTest, LowersWhatTheOpsetLacks) {
  for (ElementType type : {ElementType::kFloat32, ElementType::kFloat16}) {
    for (int opset : {17, 18}) {
      std::unique_ptr<Graph> fused = FusedOpsGraph(opset, type);
      std::unique_ptr<Graph> lowered = FusedOpsGraph(opset, type);
      ASSERT_TRUE(LowerFusedOpsForOnnx(*lowered).ok());
      ASSERT_TRUE(lowered->Verify().ok());
      EXPECT_EQ(FusedOps(*lowered), 0);
      auto want = RunGraph(*fused, DefaultKernelRegistry(), {Input(type)});
      auto got = RunGraph(*lowered, DefaultKernelRegistry(), {Input(type)});
      ASSERT_TRUE(want.ok()) << want.status();
      ASSERT_TRUE(got.ok()) << got.status();
      const double tolerance = type == ElementType::kFloat16 ? 8e-3 : 2e-6;
      for (int64_t i = 0; i < (*want)[0].num_elements(); ++i) {
        const double a = At((*want)[0], i), b = At((*got)[0], i);
        if (std::isnan(a) || std::isnan(b)) {
          EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << i << ": " << a << " vs " << b;
          continue;
        }
        EXPECT_NEAR(a, b, tolerance * std::max(1.0, std::fabs(a))) << "opset " << opset << " element " << i;
      }
    }
  }
}

TEST(OpFusionExportTest, KeepsTheOpsWhereTheOpsetHasThem) {
  std::unique_ptr<Graph> g = FusedOpsGraph(24, ElementType::kFloat32);
  ASSERT_TRUE(LowerFusedOpsForOnnx(*g).ok());
  EXPECT_EQ(FusedOps(*g), 4);
  std::unique_ptr<Graph> at23 = FusedOpsGraph(23, ElementType::kFloat32);
  ASSERT_TRUE(LowerFusedOpsForOnnx(*at23).ok());
  EXPECT_EQ(CountOps(*at23, "Gelu"), 2);
  EXPECT_EQ(CountOps(*at23, "RMSNormalization"), 1);
  EXPECT_EQ(CountOps(*at23, "Swish"), 0);  // opset 24
}

}  // namespace
}  // namespace attune::testing
