// Dead-code elimination: unused nodes go, no-op nodes are bypassed, graph
// outputs keep their names.
#include <gtest/gtest.h>

#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

TEST(CanonDeadCode, RemovesUnusedChainsOnly) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({2}));
  Value* used = b.Node("Relu", {x});
  b.Node("Exp", {b.Node("Neg", {x})});  // nobody reads it
  b.Output(used);
  auto pass = MakeDeadCodePass();
  EXPECT_TRUE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(b.graph().num_nodes(), 1);
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
}

TEST(CanonDeadCode, BypassesIdentityDropoutAndSameTypeCast) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"n", 4}));
  Value* id = b.Node("Identity", {x});
  Value* dropped = b.Node("Dropout", {id, b.Constant("ratio", ScalarOf<float>(0.1f))});
  Value* cast = b.Node("Cast", {dropped}, Attrs({{"to", int64_t{1}}}));
  Value* y = b.Node("Relu", {cast});
  Value* half = b.Node("Cast", {y}, Attrs({{"to", int64_t{10}}}));  // a real conversion stays
  b.Output(half);
  auto pass = MakeDeadCodePass();
  EXPECT_TRUE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(b.graph().num_nodes(), 2);
  EXPECT_EQ(y->producer()->input(0), x);
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
}

TEST(CanonDeadCode, KeepsTrainingDropoutAndNamedOutputs) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({4}));
  Value* mode = b.Input("training", ElementType::kBool, Dims({}));
  Value* dropped = b.Node("Dropout", {x, b.Constant("ratio", ScalarOf<float>(0.5f)), mode});
  Value* named = b.Node("Identity", {dropped}, {}, "result");
  b.Output(named);
  auto pass = MakeDeadCodePass();
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
  EXPECT_EQ(b.graph().num_nodes(), 2);
  EXPECT_EQ(b.graph().outputs()[0]->name(), "result_out");
}

}  // namespace
}  // namespace attune::testing
