// Constant folding: what folds, what must not, and that kernel errors are not fatal.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/passes/constant_folding.h"
#include "engine/passes/passes.h"
#include "ops/run_node.h"
#include "tests/common/graph_builder.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;

absl::StatusOr<bool> Fold(Graph& graph, int64_t max_added_bytes = kDefaultMaxFoldedBytes,
                          const KernelRegistry* registry = &DefaultKernelRegistry()) {
  ConstantFoldingOptions options;
  options.max_added_bytes = max_added_bytes;
  auto pass = MakeConstantFoldingPass(options);
  PassContext context;
  context.registry = registry;
  auto changed = pass->Run(graph, context);
  if (!changed.ok()) return changed;
  absl::Status verified = graph.Verify();
  if (!verified.ok()) return verified;
  return changed;
}

TEST(CanonConstantFolding, FoldsAChainOfConstantsKeepingTheOutputValue) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"n", 2}));
  Value* c1 = b.Constant("c1", Floats({2}, {1.f, 2.f}));
  Value* c2 = b.Constant("c2", Floats({2}, {10.f, 20.f}));
  Value* sum = b.Node("Add", {c1, c2}, {}, "sum");
  Value* scaled = b.Node("Mul", {sum, b.Constant("three", ScalarOf<float>(3.f))}, {}, "scaled");
  Value* y = b.Node("Add", {x, scaled}, {}, "y");
  b.Output(y);
  auto changed = Fold(b.graph());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(b.graph().num_nodes(), 1);
  ASSERT_TRUE(scaled->is_constant());
  EXPECT_EQ(scaled->name(), "scaled_out");
  EXPECT_EQ(scaled->producer(), nullptr);
  EXPECT_EQ(scaled->constant()->values<float>()[0], 33.f);  // (1 + 10) * 3
  EXPECT_EQ(scaled->constant()->values<float>()[1], 66.f);  // (2 + 20) * 3
  EXPECT_EQ(y->producer()->input(1), scaled);
  EXPECT_FALSE(*Fold(b.graph()));  // idempotent
}

TEST(CanonConstantFolding, ConstantNodesAndGraphOutputs) {
  GraphBuilder b;
  Attributes attrs;
  attrs.Set("value_ints", std::vector<int64_t>{4, 5});
  Value* c = b.Node("Constant", {}, attrs, "c");
  Value* neg = b.Node("Neg", {c}, {}, "neg");
  b.Output(neg);
  ASSERT_TRUE(*Fold(b.graph()));
  EXPECT_EQ(b.graph().num_nodes(), 0);
  ASSERT_EQ(b.graph().outputs().size(), 1u);
  EXPECT_EQ(b.graph().outputs()[0], neg);
  ASSERT_TRUE(neg->is_constant());
  EXPECT_EQ(neg->constant()->values<int64_t>()[0], -4);
  EXPECT_EQ(neg->constant()->values<int64_t>()[1], -5);
}

TEST(CanonConstantFolding, ShapeAndSizeOfStaticShapesFoldWithoutData) {
  GraphBuilder b(17);
  Value* x = b.Input("x", kF32, Dims({2, 3, 4}));
  Value* shape = b.Node("Shape", {x});
  Value* size = b.Node("Size", {x});
  Value* dyn = b.Input("d", kF32, Dims({"batch", 3}));
  Value* dyn_shape = b.Node("Shape", {dyn});
  b.Output(shape);
  b.Output(size);
  b.Output(dyn_shape);
  ASSERT_TRUE(*Fold(b.graph()));
  ASSERT_TRUE(shape->is_constant());
  EXPECT_EQ(std::vector<int64_t>(shape->constant()->values<int64_t>().begin(), shape->constant()->values<int64_t>().end()),
            std::vector<int64_t>({2, 3, 4}));
  ASSERT_TRUE(size->is_constant());
  EXPECT_EQ(size->constant()->values<int64_t>()[0], 24);
  EXPECT_FALSE(dyn_shape->is_constant());
}

TEST(CanonConstantFolding, ShapeStartEndFromOpset15) {
  GraphBuilder b(15);
  Value* x = b.Input("x", kF32, Dims({2, 3, 4}));
  Value* tail = b.Node("Shape", {x}, Attrs({{"start", int64_t{-2}}}));
  b.Output(tail);
  ASSERT_TRUE(*Fold(b.graph()));
  ASSERT_TRUE(tail->is_constant());
  ASSERT_EQ(tail->constant()->num_elements(), 2);
  EXPECT_EQ(tail->constant()->values<int64_t>()[0], 3);
  EXPECT_EQ(tail->constant()->values<int64_t>()[1], 4);
}

TEST(CanonConstantFolding, NeverFoldsRandomOps) {
  GraphBuilder b;
  KernelRegistry registry;
  registry.Register("", "RandomNormal", 1, [](const KernelInfo&) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    return MakeKernel([](KernelContext& ctx) -> absl::Status {
      auto out = ctx.AllocateOutput(0, ElementType::kFloat32, {2});
      return out.status();
    });
  });
  Value* r = b.Node("RandomNormal", {}, Attrs({{"shape", std::vector<int64_t>{2}}}));
  b.Output(r);
  EXPECT_FALSE(*Fold(b.graph(), kDefaultMaxFoldedBytes, &registry));
  EXPECT_EQ(b.graph().num_nodes(), 1);
}

TEST(CanonConstantFolding, LargeOutputsStayNodes) {
  GraphBuilder b;
  Value* dims = b.Constant("dims", Int64s({1024, 1024}));
  Value* big = b.Node("ConstantOfShape", {dims});  // 4 MiB of zeros
  Value* small = b.Node("ConstantOfShape", {b.Constant("d2", Int64s({4}))});
  b.Output(big);
  b.Output(small);
  ASSERT_TRUE(*Fold(b.graph()));
  EXPECT_FALSE(big->is_constant());
  EXPECT_TRUE(small->is_constant());
  // With a higher limit it folds.
  ASSERT_TRUE(*Fold(b.graph(), int64_t{8} << 20));
  EXPECT_TRUE(big->is_constant());
}

TEST(CanonConstantFolding, LargeTransposeOfAnOnlyUseWeightFolds) {
  // Folding it does not grow the model: the input constant goes away.
  GraphBuilder b;
  std::vector<float> values(1024 * 512);
  for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 97);
  Value* w = b.Constant("w", Floats({1024, 512}, values));
  Value* wt = b.Node("Transpose", {w}, Attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  Value* x = b.Input("x", kF32, Dims({"n", 1024}));
  b.Output(b.Node("MatMul", {x, wt}));
  ASSERT_TRUE(*Fold(b.graph()));
  ASSERT_TRUE(wt->is_constant());
  EXPECT_EQ(wt->constant()->shape(), std::vector<int64_t>({512, 1024}));
  EXPECT_EQ(wt->constant()->values<float>()[1], values[512]);  // wt[0][1] = w[1][0]
}

TEST(CanonConstantFolding, LargeTransposeOfASharedWeightStaysANode) {
  GraphBuilder b;
  Value* w = b.Constant("w", Floats({1024, 512}, std::vector<float>(1024 * 512, 1.f)));
  Value* wt = b.Node("Transpose", {w}, Attrs({{"perm", std::vector<int64_t>{1, 0}}}));
  Value* x = b.Input("x", kF32, Dims({"n", 1024}));
  Value* x2 = b.Input("x2", kF32, Dims({"n", 512}));
  b.Output(b.Node("MatMul", {x, wt}));
  b.Output(b.Node("MatMul", {x2, w}));
  EXPECT_FALSE(*Fold(b.graph()));
  EXPECT_FALSE(wt->is_constant());
}

TEST(CanonConstantFolding, ReshapeOfALargeConstantIsExempt) {
  GraphBuilder b;
  Value* w = b.Constant("w", Floats({1024, 512}, std::vector<float>(1024 * 512, 1.f)));
  Value* r = b.Node("Reshape", {w, b.Constant("t", Int64s({512, 1024}))});
  Value* x = b.Input("x", kF32, Dims({"n", 1024}));
  b.Output(b.Node("MatMul", {x, w}));
  b.Output(r);
  ASSERT_TRUE(*Fold(b.graph()));
  EXPECT_TRUE(r->is_constant());
}

TEST(CanonConstantFolding, KernelErrorsAreNotFatal) {
  GraphBuilder b;
  Value* a = b.Constant("a", Floats({2}, {1.f, 2.f}));
  Value* c = b.Constant("c", Floats({3}, {1.f, 2.f, 3.f}));
  Value* bad = b.Node("Add", {a, c});  // [2] + [3] does not broadcast
  Value* good = b.Node("Neg", {a});
  b.Output(bad);
  b.Output(good);
  auto changed = Fold(b.graph());
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_FALSE(bad->is_constant());
  EXPECT_TRUE(good->is_constant());
}

TEST(CanonConstantFolding, ScatterOfConstantsFoldsAndABadIndexStaysANode) {
  GraphBuilder b(18);
  Value* data = b.Constant("data", Floats({2, 2}, {1.f, 2.f, 3.f, 4.f}));
  Value* row = b.Constant("row", Tensor::FromVector<int64_t>({1, 1}, {-1}).value());
  Value* updates = b.Constant("updates", Floats({1, 2}, {10.f, 20.f}));
  Value* nd = b.Node("ScatterND", {data, row, updates}, Attrs({{"reduction", std::string("add")}}), "nd");
  Value* cols = b.Constant("cols", Tensor::FromVector<int64_t>({1, 2}, {1, 0}).value());
  Value* elements = b.Node("ScatterElements", {nd, cols, updates}, Attrs({{"axis", int64_t{0}}}), "elements");
  Value* bad_row = b.Constant("bad_row", Tensor::FromVector<int64_t>({1, 1}, {2}).value());
  Value* bad = b.Node("ScatterND", {data, bad_row, updates}, {}, "bad");
  b.Output(elements);
  b.Output(bad);
  ASSERT_TRUE(*Fold(b.graph()));
  ASSERT_TRUE(nd->is_constant());
  EXPECT_EQ(nd->constant()->values<float>()[2], 13.f);  // row -1 is the last row: 3 + 10
  EXPECT_EQ(nd->constant()->values<float>()[3], 24.f);
  ASSERT_TRUE(elements->is_constant());
  const auto e = elements->constant()->values<float>();
  EXPECT_EQ(std::vector<float>(e.begin(), e.end()), (std::vector<float>{1.f, 20.f, 10.f, 24.f}));
  EXPECT_FALSE(bad->is_constant());  // index 2 of 2 rows: the kernel refuses it at run time
}

TEST(CanonConstantFolding, OpsWithoutAKernelStay) {
  GraphBuilder b;
  Value* a = b.Constant("a", Floats({2}, {1.f, 2.f}));
  Value* odd = b.Node("NoSuchOp", {a}, {}, "", "com.example");
  b.Output(odd);
  EXPECT_FALSE(*Fold(b.graph()));
}

TEST(CanonConstantFolding, UsesTheRegistryOfTheContext) {
  // A registry with one tiny kernel: the pass must run that kernel.
  KernelRegistry registry;
  registry.Register("", "Add", 7, [](const KernelInfo& info) -> absl::StatusOr<std::unique_ptr<Kernel>> {
    EXPECT_NE(info.constant_inputs[0], nullptr);  // folding shows the inputs as constants
    return MakeKernel([](KernelContext& ctx) -> absl::Status {
      auto out = ctx.AllocateOutput(0, ElementType::kFloat32, {});
      if (!out.ok()) return out.status();
      *(*out)->data<float>() = 42.f;  // not an addition: proves which kernel ran
      return absl::OkStatus();
    });
  });
  GraphBuilder b;
  Value* sum = b.Node("Add", {b.Constant("a", ScalarOf<float>(1.f)), b.Constant("c", ScalarOf<float>(2.f))});
  b.Output(sum);
  ASSERT_TRUE(*Fold(b.graph(), kDefaultMaxFoldedBytes, &registry));
  EXPECT_EQ(*sum->constant()->data<float>(), 42.f);
}

TEST(CanonConstantFolding, TorchScaleChainFoldsOnceTheHeadDimIsKnown) {
  // scores / K.size(-1) ** 0.5 with K [batch, 4, seq, 16]: constant folding alone
  // cannot start (K's shape is not static); shape folding makes the Slice
  // constant, after which Squeeze -> Cast -> Pow fold to 4.
  GraphBuilder b;
  Value* k = b.Input("k", kF32, Dims({"batch", 4, "seq", 16}));
  Value* shape = b.Node("Shape", {k});
  Value* last = b.Node("Slice", {shape, b.Constant("s", Int64s({-1})), b.Constant("e", Int64s({INT64_MAX})),
                                 b.Constant("a", Int64s({0}))});
  Value* squeezed = b.Node("Squeeze", {last, b.Constant("ax", Int64s({0}))});
  Value* cast = b.Node("Cast", {squeezed}, Attrs({{"to", int64_t{1}}}));
  Value* root = b.Node("Pow", {cast, b.Constant("half", ScalarOf<float>(0.5f))}, {}, "root");
  b.Output(b.Node("Div", {k, root}));
  EXPECT_FALSE(*Fold(b.graph()));
  auto shape_folding = MakeShapeFoldingPass();
  ASSERT_TRUE(*RunPass(*shape_folding, b.graph()));
  ASSERT_TRUE(*Fold(b.graph()));
  ASSERT_TRUE(root->is_constant());
  EXPECT_EQ(root->constant()->type(), kF32);
  EXPECT_EQ(root->constant()->rank(), 0);
  EXPECT_FLOAT_EQ(*root->constant()->data<float>(), 4.f);
}

TEST(CanonRunNode, RunsOneNodeAndReportsErrorsWithTheNodeName) {
  GraphBuilder b;
  Value* a = b.Input("a", kF32, Dims({2}));
  Value* c = b.Input("c", kF32, Dims({2}));
  Value* sum = b.Node("Add", {a, c}, {}, "adder");
  auto out = RunNode(*sum->producer(), 17, {Floats({2}, {1.f, 2.f}), Floats({2}, {3.f, 5.f})}, DefaultKernelRegistry());
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ(out->size(), 1u);
  EXPECT_EQ((*out)[0].values<float>()[0], 4.f);
  EXPECT_EQ((*out)[0].values<float>()[1], 7.f);
  auto bad = RunNode(*sum->producer(), 17, {Floats({2}, {1.f, 2.f}), Floats({3}, {1.f, 2.f, 3.f})},
                     DefaultKernelRegistry());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("adder"), std::string::npos) << bad.status();
  auto wrong_count = RunNode(*sum->producer(), 17, {Floats({2}, {1.f, 2.f})}, DefaultKernelRegistry());
  EXPECT_FALSE(wrong_count.ok());
}

}  // namespace
}  // namespace attune::testing
