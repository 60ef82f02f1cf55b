// The mask proof on its own: masks built from shapes and constants, proven
// (or refuted) by evaluating them at the probe sizes, with the reasons the
// report shows.
#include "engine/passes/attention/mask_proof.h"

#include <limits>

#include "absl/strings/match.h"
#include "engine/passes/passes.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

using attention::MaskProofRequest;
using attention::MaskReading;
using attention::ProveCausalMask;

constexpr float kInf = std::numeric_limits<float>::infinity();

// x [batch, seq, 4]; the mask is computed by `make` from [T] (1-D).
struct MaskGraph {
  GraphBuilder b{17};
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", 4}));
  Value* t1 = nullptr;

  MaskGraph() {
    Value* t = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("one", ScalarOf<int64_t>(1))},
                      Attrs({{"axis", int64_t{0}}}));
    t1 = b.Node("Unsqueeze", {t, b.Constant("axes", Int64s({0}))});
  }
  // Rows and columns [0, T) of a constant buffer.
  Value* SliceBuffer(Tensor buffer) {
    Value* starts = b.Constant("starts", Int64s({0, 0}));
    Value* ends = b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}));
    return b.Node("Slice", {b.Constant("buffer", std::move(buffer)), starts, ends, b.Constant("ax", Int64s({0, 1}))});
  }
  absl::StatusOr<attention::ProvenMask> Prove(Value* mask, MaskReading reading) {
    b.Output(mask);
    PassContext context;
    context.registry = &DefaultKernelRegistry();
    EXPECT_TRUE(MakeShapeInferencePass()->Run(b.graph(), context).ok());
    MaskProofRequest r;
    r.mask = mask;
    r.reading = reading;
    r.q_len = Dim::Symbol("seq");
    r.kv_len = Dim::Symbol("seq");
    return ProveCausalMask(b.graph(), r, DefaultKernelRegistry(), {});
  }
};

Tensor FloatBuffer(int64_t n, const std::function<float(int64_t, int64_t)>& f) {
  Tensor t = *Tensor::Create(ElementType::kFloat32, {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) t.data<float>()[i * n + j] = f(i, j);
  return t;
}

Tensor BoolBuffer(int64_t n, const std::function<bool(int64_t, int64_t)>& f) {
  Tensor t = *Tensor::Create(ElementType::kBool, {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) t.data<bool>()[i * n + j] = f(i, j);
  return t;
}

TEST(MaskProofTest, AdditiveCausalBuffer) {
  MaskGraph g;
  Value* m = g.SliceBuffer(FloatBuffer(24, [](int64_t i, int64_t j) { return j > i ? -kInf : 0.0f; }));
  auto proof = g.Prove(m, MaskReading::kAdditive);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_FALSE(proof->open);
  EXPECT_EQ(proof->window, 0);
  EXPECT_EQ(proof->probes, 6) << "T = 1, 2, 3, 7, 16 and the buffer's 24";
}

TEST(MaskProofTest, AdditiveValueThatNeitherHidesNorShows) {
  MaskGraph g;
  Value* m = g.SliceBuffer(FloatBuffer(24, [](int64_t i, int64_t j) { return j > i ? -0.5f : 0.0f; }));
  auto proof = g.Prove(m, MaskReading::kAdditive);
  ASSERT_FALSE(proof.ok());
  EXPECT_EQ(proof.status().message(), "mask value -0.5 at T=2 row 0 col 1 is neither 0 nor a blocking value (<= -1e4)");
}

TEST(MaskProofTest, LargeNegativeCountsAsHidden) {
  MaskGraph g;
  Value* m = g.SliceBuffer(FloatBuffer(24, [](int64_t i, int64_t j) { return j > i ? -1e4f : 0.0f; }));
  EXPECT_TRUE(g.Prove(m, MaskReading::kAdditive).ok());
}

TEST(MaskProofTest, KeepMaskIsReadInverted) {
  MaskGraph g;
  Value* m = g.SliceBuffer(BoolBuffer(24, [](int64_t i, int64_t j) { return j <= i; }));
  EXPECT_TRUE(g.Prove(m, MaskReading::kBlockedWhereFalse).ok());
  MaskGraph h;
  Value* wrong = h.SliceBuffer(BoolBuffer(24, [](int64_t i, int64_t j) { return j <= i; }));
  auto proof = h.Prove(wrong, MaskReading::kBlockedWhereTrue);
  ASSERT_FALSE(proof.ok());
  EXPECT_EQ(proof.status().message(), "mask differs from causal at T=1 row 0 col 0 (hidden, causal shows it)");
}

TEST(MaskProofTest, InfersTheWindowAndChecksItEverywhere) {
  MaskGraph g;
  Value* m = g.SliceBuffer(BoolBuffer(24, [](int64_t i, int64_t j) { return j > i || j <= i - 5; }));
  auto proof = g.Prove(m, MaskReading::kBlockedWhereTrue);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_EQ(proof->window, 5);

  // A band that narrows further down is no sliding window.
  MaskGraph h;
  Value* bad = h.SliceBuffer(BoolBuffer(24, [](int64_t i, int64_t j) { return j > i || j <= i - (i < 12 ? 5 : 3); }));
  proof = h.Prove(bad, MaskReading::kBlockedWhereTrue);
  ASSERT_FALSE(proof.ok());
  EXPECT_EQ(proof.status().message(), "mask differs from causal at T=7 row 5 col 0 (hidden, causal shows it)");
}

TEST(MaskProofTest, ShortBufferLimitsTheProbes) {
  MaskGraph g;
  Value* m = g.SliceBuffer(BoolBuffer(5, [](int64_t i, int64_t j) { return j > i; }));
  auto proof = g.Prove(m, MaskReading::kBlockedWhereTrue);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_EQ(proof->probes, 4) << "T = 1, 2, 3 and the buffer's 5";
}

TEST(MaskProofTest, MaskFromInputValuesIsNotCausal) {
  MaskGraph g;
  Value* pad = g.b.Input("pad", ElementType::kBool, Dims({"seq", "seq"}));
  Value* causal = g.SliceBuffer(BoolBuffer(24, [](int64_t i, int64_t j) { return j > i; }));
  auto proof = g.Prove(g.b.Node("Or", {causal, pad}), MaskReading::kBlockedWhereTrue);
  ASSERT_FALSE(proof.ok());
  EXPECT_EQ(proof.status().message(), "mask depends on input values ('pad')");
}

TEST(MaskProofTest, OpenMaskHidesNothing) {
  MaskGraph g;
  Value* m = g.SliceBuffer(FloatBuffer(24, [](int64_t, int64_t) { return 0.0f; }));
  auto proof = g.Prove(m, MaskReading::kAdditive);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_TRUE(proof->open);
}

TEST(MaskProofTest, RowBroadcastMaskIsNotCausal) {
  MaskGraph g;
  Value* row = g.b.Node("Slice", {g.SliceBuffer(BoolBuffer(24, [](int64_t i, int64_t j) { return j > i; })),
                                  g.b.Constant("s", Int64s({0})), g.b.Constant("e", Int64s({1})),
                                  g.b.Constant("a", Int64s({0}))});
  auto proof = g.Prove(row, MaskReading::kBlockedWhereTrue);
  ASSERT_FALSE(proof.ok());
  EXPECT_TRUE(absl::StrContains(proof.status().message(), "not one row per query")) << proof.status();
}

}  // namespace
}  // namespace attune::testing
