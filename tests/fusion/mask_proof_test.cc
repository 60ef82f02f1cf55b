// The mask proof on its own: masks built from shapes and constants, proven
// (or refuted) by evaluating them at the probe sizes, with the reasons the
// report shows.
#include "engine/passes/attention/mask_proof.h"

#include <limits>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "engine/exec/plan_evaluator.h"
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
    context.evaluator = &DefaultSubgraphEvaluator();
    EXPECT_TRUE(MakeShapeInferencePass()->Run(b.graph(), context).ok());
    MaskProofRequest r;
    r.mask = mask;
    r.reading = reading;
    r.q_len = Dim::Symbol("seq");
    r.kv_len = Dim::Symbol("seq");
    return ProveCausalMask(b.graph(), r, DefaultSubgraphEvaluator(), {});
  }
  Value* Scalar(const std::string& name, int64_t v) { return b.Constant(name, ScalarOf<int64_t>(v)); }
  // [T] positions 0..T-1.
  Value* Positions() {
    Value* t = b.Node("Squeeze", {t1, b.Constant("sq", Int64s({0}))});
    return b.Node("Range", {Scalar("r0", 0), t, Scalar("r1", 1)});
  }
  // hidden = key in the future, or `w` or more keys back: a Range comparison.
  Value* RangeWindow(int64_t w) {
    Value* pos = Positions();
    Value* back = b.Node("Sub", {b.Node("Unsqueeze", {pos, b.Constant("a1", Int64s({1}))}),
                                 b.Node("Unsqueeze", {pos, b.Constant("a0", Int64s({0}))})});
    Value* future = b.Node("Less", {back, Scalar("zero", 0)});
    Value* far = b.Node("Not", {b.Node("Less", {back, Scalar("window", w)})});
    return b.Node("Or", {future, far});
  }
  // hidden = not in tril(triu(ones, 1 - w)): Trilu with k.
  Value* TriluWindow(int64_t w) {
    Attributes one;
    one.Set("value", *Tensor::FromVector<float>({1}, {1.0f}));
    Value* ones = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, one);
    Value* lower = b.Node("Trilu", {ones, Scalar("k0", 0)}, Attrs({{"upper", int64_t{0}}}));
    Value* band = b.Node("Trilu", {lower, Scalar("k", 1 - w)}, Attrs({{"upper", int64_t{1}}}));
    return b.Node("Equal", {band, b.Constant("f0", ScalarOf<float>(0.0f))});
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
  EXPECT_EQ(proof->probes, 8) << "T = 1, 2, 3, 7, 16, 4 (from the 2 starts) and the buffer's 23 and 24";
  EXPECT_EQ(proof->longest_probe, 24);
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

// A buffer small enough that its entries are read one by one: its -1e4
// entries are only sliced, so they are values, not lengths.
TEST(MaskProofTest, SmallBufferEntriesAreValues) {
  MaskGraph g;
  Value* m = g.SliceBuffer(FloatBuffer(8, [](int64_t i, int64_t j) { return j > i ? -1e4f : 0.0f; }));
  auto proof = g.Prove(m, MaskReading::kAdditive);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_EQ(proof->window, 0);
  EXPECT_EQ(proof->longest_constant, 8);
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
  EXPECT_EQ(proof->probes, 5) << "T = 1, 2, 3 and the buffer's 4 and 5";
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

// A window only shows at lengths beyond it: the probe lengths come from the
// mask's constants, so windows of 4 to 128 are proven as themselves (a window
// of 16 is never causal), in each spelling, with probes longer than the window.
TEST(MaskProofTest, WindowsAreProvenAsThemselvesBeyondTheirWidth) {
  for (int64_t w : {4, 16, 64, 128}) {
    for (const char* form : {"range", "trilu", "buffer"}) {
      SCOPED_TRACE(absl::StrCat("window ", w, " ", form));
      MaskGraph g;
      Value* m = std::string(form) == "range"   ? g.RangeWindow(w)
                 : std::string(form) == "trilu" ? g.TriluWindow(w)
                                                : g.SliceBuffer(BoolBuffer(2 * w + 8, [&](int64_t i, int64_t j) {
                                                    return j > i || j <= i - w;
                                                  }));
      auto proof = g.Prove(m, MaskReading::kBlockedWhereTrue);
      ASSERT_TRUE(proof.ok()) << proof.status();
      EXPECT_FALSE(proof->open);
      EXPECT_EQ(proof->window, w);
      EXPECT_GT(proof->longest_probe, w) << "no probe reaches beyond the window";
    }
  }
}

// The same window seen only by the KV cache: one query (decode) against a
// past of any length, the past probed at the constants' lengths too.
TEST(MaskProofTest, WindowOfADecodeStepIsProvenThroughThePastLengths) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", 1, 4}));
  Value* past = b.Input("past_key", ElementType::kFloat32, Dims({"batch", 2, "past", 4}));
  (void)x;
  auto scalar = [&](const std::string& n, int64_t v) { return b.Constant(n, ScalarOf<int64_t>(v)); };
  Value* p = b.Node("Gather", {b.Node("Shape", {past}), scalar("two", 2)}, Attrs({{"axis", int64_t{0}}}));
  Value* total = b.Node("Add", {p, scalar("one", 1)});
  Value* rows = b.Node("Range", {p, total, scalar("step", 1)});
  Value* cols = b.Node("Range", {scalar("zero", 0), total, scalar("step1", 1)});
  Value* back = b.Node("Sub", {b.Node("Unsqueeze", {rows, b.Constant("a1", Int64s({1}))}),
                               b.Node("Unsqueeze", {cols, b.Constant("a0", Int64s({0}))})});
  Value* hidden = b.Node("Or", {b.Node("Less", {back, scalar("z", 0)}),
                                b.Node("Not", {b.Node("Less", {back, scalar("window", 16)})})});
  b.Output(hidden);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  ASSERT_TRUE(MakeShapeInferencePass()->Run(b.graph(), context).ok());
  MaskProofRequest r;
  r.mask = hidden;
  r.reading = MaskReading::kBlockedWhereTrue;
  r.q_len = Dim::Known(1);
  r.kv_len = Dim::Symbol("past+1");
  r.past_len = Dim::Symbol("past");
  auto proof = ProveCausalMask(b.graph(), r, DefaultSubgraphEvaluator(), {});
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_EQ(proof->window, 16);
  EXPECT_GT(proof->longest_probe, 17);
}

// A constant beyond the cap on probe lengths: the proof refuses rather than
// prove on probes too short to see it.
TEST(MaskProofTest, ConstantBeyondTheCapIsNotProven) {
  MaskGraph g;
  auto proof = g.Prove(g.RangeWindow(5000), MaskReading::kBlockedWhereTrue);
  ASSERT_FALSE(proof.ok());
  EXPECT_TRUE(absl::StrContains(proof.status().message(), "constant 5000")) << proof.status();
  EXPECT_TRUE(absl::StrContains(proof.status().message(), "beyond the probe lengths' cap of 4096")) << proof.status();
}

// "To the end" sentinels (INT64_MAX Slice ends) and fill values (finfo.min
// selected by a Where) are no lengths: they neither refuse nor slow the proof.
TEST(MaskProofTest, SentinelsAndFillValuesAreNoLengths) {
  MaskGraph g;
  Value* buffer = g.b.Constant("buffer", FloatBuffer(24, [](int64_t i, int64_t j) { return j > i ? 1.0f : 0.0f; }));
  Value* ends = g.b.Node("Concat", {g.t1, g.b.Constant("to_end", Int64s({std::numeric_limits<int64_t>::max()}))},
                         Attrs({{"axis", int64_t{0}}}));
  Value* rows = g.b.Node("Slice", {buffer, g.b.Constant("s", Int64s({0, 0})), ends, g.b.Constant("ax", Int64s({0, 1}))});
  Value* cols = g.b.Node("Slice", {rows, g.b.Constant("s1", Int64s({0})), g.t1, g.b.Constant("ax1", Int64s({1}))});
  Value* bias = g.b.Node("Where", {g.b.Node("Cast", {cols}, Attrs({{"to", int64_t{9}}})),
                                   g.b.Constant("min", ScalarOf<float>(-3.4028234663852886e38f)),
                                   g.b.Constant("open", ScalarOf<float>(0.0f))});
  auto proof = g.Prove(bias, MaskReading::kAdditive);
  ASSERT_TRUE(proof.ok()) << proof.status();
  EXPECT_EQ(proof->window, 0);
  EXPECT_EQ(proof->longest_constant, 24);
}

}  // namespace
}  // namespace attune::testing
