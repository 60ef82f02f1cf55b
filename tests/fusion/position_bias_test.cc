// Attention with a position bias (ALiBi, T5's relative bias) added to the
// scores next to a causal and/or padding mask: the fusion proves the mask
// with the bias held at zero and passes the bias to the fused op, which must
// compute what the subgraph computes whatever the bias holds (random values,
// NaN, +inf, -inf at some keys or every visible key of a row), on every
// backend and ISA, with left padding whose first rows see no key and with a
// fully padded batch. The bias is a graph input here, so that the tests can
// give it any values; the models in models/ compute theirs from shapes and
// constants. Traps (a bias that multiplies, that also hides keys, a fill a
// bias could reach) do not fuse as a bias.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/fusion/attention_graphs.h"
#include "tests/fusion/backend_runs.h"

namespace attune::testing {
namespace {

constexpr float kFinfoMin = -std::numeric_limits<float>::max();
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr int64_t kHeads = 4, kHeadDim = 8, kChannels = kHeads * kHeadDim;

enum class Form {
  kMpt,         // scores * scale + bias, masked_fill(~key padding, min), masked_fill(causal, min)
  kT5Encoder,   // scores + (bias + (1 - mask) * min)
  kT5Decoder,   // scores + (bias + (1 - causal * mask) * min)
  kMultiplied,  // trap: scores * bias, then the causal masked_fill
  kBiasAlsoMasks,  // trap: the bias is added and also decides a masked_fill (bias < -100 hides)
  kWeakFill,    // trap: scores + bias, then masked_fill(causal, -1e4): a bias can reach -1e4
  kMaxFloor,    // trap: Max(scores + bias, -50) then the causal masked_fill: the floor is no mask
};

// How the bias input is shaped: ALiBi (1, H, 1, S), per batch (B, H, 1, S),
// T5 (1, H, T, S), along the query axis (1, H, T, 1).
enum class BiasShape { kAlibi, kAlibiPerBatch, kT5, kQueryAxis };

struct Spec {
  Form form = Form::kMpt;
  BiasShape bias = BiasShape::kAlibi;
};

SymbolicShape BiasDims(BiasShape b) {
  const Dim one = Dim::Known(1), heads = Dim::Known(kHeads), batch = Dim::Symbol("batch"), seq = Dim::Symbol("seq");
  switch (b) {
    case BiasShape::kAlibi: return {one, heads, one, seq};
    case BiasShape::kAlibiPerBatch: return {batch, heads, one, seq};
    case BiasShape::kT5: return {one, heads, seq, seq};
    case BiasShape::kQueryAxis: return {one, heads, seq, one};
  }
  return {};
}

std::vector<int64_t> BiasShapeAt(BiasShape b, int64_t t) {
  switch (b) {
    case BiasShape::kAlibi: return {1, kHeads, 1, t};
    case BiasShape::kAlibiPerBatch: return {2, kHeads, 1, t};
    case BiasShape::kT5: return {1, kHeads, t, t};
    case BiasShape::kQueryAxis: return {1, kHeads, t, 1};
  }
  return {};
}

std::unique_ptr<Graph> Build(const Spec& s) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", kChannels}));
  Value* attention_mask = b.Input("attention_mask", ElementType::kInt64, Dims({"batch", "seq"}));
  Value* bias = b.Input("bias", ElementType::kFloat32, BiasDims(s.bias));
  auto axes = [&](std::vector<int64_t> a) { return b.Constant("axes", Int64s(a)); };
  auto perm = [](std::vector<int64_t> p) { return Attrs({{"perm", p}}); };
  auto heads = [&](Value* v, std::vector<int64_t> p) {
    return b.Node("Transpose", {b.Node("Reshape", {v, b.Constant("split", Int64s({0, 0, kHeads, kHeadDim}))})},
                  perm(p));
  };
  Value* q = heads(b.Node("MatMul", {x, b.Constant("Wq", PseudoRandom({kChannels, kChannels}, 1))}), {0, 2, 1, 3});
  Value* kt = heads(b.Node("MatMul", {x, b.Constant("Wk", PseudoRandom({kChannels, kChannels}, 2))}), {0, 2, 3, 1});
  Value* v = heads(b.Node("MatMul", {x, b.Constant("Wv", PseudoRandom({kChannels, kChannels}, 3))}), {0, 2, 1, 3});
  Value* scores = b.Node("MatMul", {q, kt}, {}, "scores");
  const bool t5 = s.form == Form::kT5Encoder || s.form == Form::kT5Decoder;
  if (!t5) scores = b.Node("Mul", {scores, b.Constant("scale", ScalarOf<float>(0.35f))});

  // The causal part at run time: Trilu(ones(T, T)) == 0 hides.
  Value* t1 = b.Node("Unsqueeze", {b.Node("Gather", {b.Node("Shape", {x}), b.Constant("one", ScalarOf<int64_t>(1))},
                                          Attrs({{"axis", int64_t{0}}})),
                                   axes({0})});
  Attributes one_value;
  one_value.Set("value", *Tensor::FromVector<float>({1}, {1.0f}));
  Value* ones = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, one_value);
  Value* tril = b.Node("Trilu", {ones}, Attrs({{"upper", int64_t{0}}}));
  Value* causal_hidden = b.Node("Equal", {tril, b.Constant("zero_f", ScalarOf<float>(0.0f))});
  Value* min = b.Constant("min", ScalarOf<float>(kFinfoMin));
  Value* mask_f = b.Node("Unsqueeze", {b.Node("Cast", {attention_mask}, Attrs({{"to", int64_t{1}}})), axes({1, 2})});
  Value* one_f = b.Constant("one_f", ScalarOf<float>(1.0f));

  Value* pre = nullptr;
  switch (s.form) {
    case Form::kMpt: {
      Value* a = b.Node("Add", {scores, bias});
      Value* keep = b.Node("Unsqueeze", {b.Node("Cast", {attention_mask}, Attrs({{"to", int64_t{9}}})), axes({1, 2})});
      a = b.Node("Where", {b.Node("Not", {keep}), min, a});
      pre = b.Node("Where", {causal_hidden, min, a});
      break;
    }
    case Form::kT5Encoder:
    case Form::kT5Decoder: {
      Value* m = mask_f;
      if (s.form == Form::kT5Decoder) m = b.Node("Mul", {b.Node("Cast", {b.Node("Not", {causal_hidden})},
                                                                 Attrs({{"to", int64_t{1}}})), m});
      Value* extended = b.Node("Mul", {b.Node("Sub", {one_f, m}), min});
      pre = b.Node("Add", {scores, b.Node("Add", {bias, extended})});
      break;
    }
    case Form::kMultiplied:
      pre = b.Node("Where", {causal_hidden, min, b.Node("Mul", {scores, bias})});
      break;
    case Form::kBiasAlsoMasks: {
      Value* a = b.Node("Add", {scores, bias});
      a = b.Node("Where", {b.Node("Less", {bias, b.Constant("minus100", ScalarOf<float>(-100.0f))}), min, a});
      pre = b.Node("Where", {causal_hidden, min, a});
      break;
    }
    case Form::kMaxFloor:
      pre = b.Node("Where", {causal_hidden, min, b.Node("Max", {b.Node("Add", {scores, bias}),
                                                               b.Constant("floor", ScalarOf<float>(-50.0f))})});
      break;
    case Form::kWeakFill:
      pre = b.Node("Where", {causal_hidden, b.Constant("weak", ScalarOf<float>(-1e4f)), b.Node("Add", {scores, bias})});
      break;
  }
  Value* p = b.Node("Softmax", {pre}, Attrs({{"axis", int64_t{-1}}}), "softmax");
  Value* y = b.Node("MatMul", {p, v});
  y = b.Node("Reshape", {b.Node("Transpose", {y}, perm({0, 2, 1, 3})), b.Constant("merge", Int64s({0, 0, kChannels}))});
  b.Output(b.Node("MatMul", {y, b.Constant("Wo", PseudoRandom({kChannels, kChannels}, 4))}));
  return b.Build();
}

OptimisedAttentionGraph Optimise(const Spec& spec, bool fuse) {
  OptimisedAttentionGraph r;
  r.graph = Build(spec);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &r.report;
  r.status = DefaultPipeline(fuse)->Run(*r.graph, context);
  EXPECT_TRUE(r.status.ok()) << r.status;
  return r;
}

// What the bias holds in a run.
enum class Values { kRandom, kNaNs, kPlusInf, kMinusInfSome, kMinusInfRows };

// x, attention_mask (batch 1 left-padded by 3: its first rows see no key
// under a causal mask; or all padding) and the bias at length t.
std::vector<Tensor> Inputs(const Spec& spec, int64_t t, Values values, bool all_padded) {
  Tensor mask = *Tensor::Create(ElementType::kInt64, {2, t});
  for (int64_t j = 0; j < t; ++j) {
    mask.data<int64_t>()[j] = 1;
    mask.data<int64_t>()[t + j] = all_padded || j < 3 ? 0 : 1;
  }
  Tensor bias = PseudoRandom(BiasShapeAt(spec.bias, t), 21);
  float* data = bias.data<float>();
  const int64_t n = bias.num_elements();
  for (int64_t k = 0; k < n; ++k) {
    data[k] *= 3.0f;
    switch (values) {
      case Values::kRandom: break;
      case Values::kNaNs: if (k % 11 == 5) data[k] = std::numeric_limits<float>::quiet_NaN(); break;
      case Values::kPlusInf: if (k % 13 == 2) data[k] = kInf; break;
      case Values::kMinusInfSome: if (k % 3 == 1) data[k] = -kInf; break;
      // Every entry of head 1: rows of -inf scores at every key.
      case Values::kMinusInfRows: if (k / (n / kHeads) == 1) data[k] = -kInf; break;
    }
  }
  // T5 has no scale: smaller inputs keep its scores as moderate as a trained
  // model's (the test compares float32 paths whose rounding grows with them).
  Tensor x = PseudoRandom({2, t, kChannels}, 11);
  const bool t5 = spec.form == Form::kT5Encoder || spec.form == Form::kT5Decoder;
  for (int64_t k = 0; t5 && k < x.num_elements(); ++k) x.data<float>()[k] *= 0.5f;
  return {x, mask, bias};
}

const FusionRecord* OnlyFusion(const OptimisedAttentionGraph& r) {
  EXPECT_EQ(r.report.fusions.size(), 1u);
  return r.report.fusions.empty() ? nullptr : &r.report.fusions[0];
}

// The first element where the two differ: one NaN, or by more than 1e-5 of
// max(1, |unfused|) (T5 has no scale, so its scores and outputs run large);
// empty when they agree.
std::string DiffAt(const Tensor& want, const Tensor& got) {
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    const float a = want.data<float>()[i], b = got.data<float>()[i];
    if (std::isnan(a) && std::isnan(b)) continue;
    if (std::isnan(a) || std::isnan(b) || !(std::fabs(a - b) <= 1e-5 * std::max(1.0f, std::fabs(a))))
      return absl::StrCat("at ", i, " unfused ", a, ", fused ", b);
  }
  return "";
}

// Fused and unfused agree (NaN where NaN) on every backend at each length,
// left-padded and all padded, for each kind of bias values.
void ExpectSameOutputs(const Spec& spec, const std::vector<Values>& kinds) {
  OptimisedAttentionGraph unfused = Optimise(spec, false);
  OptimisedAttentionGraph fused = Optimise(spec, true);
  for (int64_t t : {1, 4, 17, 70}) {
    for (Values values : kinds) {
      for (bool all_padded : {false, true}) {
        const std::vector<Tensor> inputs = Inputs(spec, t, values, all_padded);
        auto want = RunWith(*unfused.graph, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
        ASSERT_TRUE(want.ok()) << want.status();
        for (const Backend& b : Backends()) {
          auto got = RunWith(*fused.graph, inputs, b);
          ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
          EXPECT_EQ(DiffAt((*want)[0], (*got)[0]), "")
              << b.name << " T=" << t << " values " << static_cast<int>(values) << (all_padded ? " all padded" : "");
        }
      }
    }
  }
}

// Entries of 2^100 and more: HugeFiniteBiasIsComputedAsTheSubgraphDoes.
const std::vector<Values> kAllValues = {Values::kRandom, Values::kNaNs, Values::kPlusInf, Values::kMinusInfSome,
                                        Values::kMinusInfRows};

TEST(PositionBiasTest, MptFormFusesAsCausalPaddingPlusBias) {
  const Spec spec{Form::kMpt, BiasShape::kAlibi};
  OptimisedAttentionGraph fused = Optimise(spec, true);
  const FusionRecord* f = OnlyFusion(fused);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mask, "causal+padding+bias");
  EXPECT_EQ(f->bias, "bias");
  EXPECT_EQ(f->key_padding, "attention_mask");
  EXPECT_TRUE(f->causal);
}

TEST(PositionBiasTest, MptFormMatchesUnfusedForAnyBiasValues) {
  ExpectSameOutputs({Form::kMpt, BiasShape::kAlibi}, kAllValues);
}

TEST(PositionBiasTest, EveryBroadcastShapeIsAddedAsComputed) {
  for (BiasShape shape : {BiasShape::kAlibiPerBatch, BiasShape::kT5, BiasShape::kQueryAxis}) {
    SCOPED_TRACE(static_cast<int>(shape));
    const Spec spec{Form::kMpt, shape};
    OptimisedAttentionGraph fused = Optimise(spec, true);
    const FusionRecord* f = OnlyFusion(fused);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->mask, "causal+padding+bias");
    ExpectSameOutputs(spec, {Values::kRandom, Values::kMinusInfSome});
  }
}

TEST(PositionBiasTest, T5EncoderFusesAsPaddingPlusBias) {
  const Spec spec{Form::kT5Encoder, BiasShape::kT5};
  OptimisedAttentionGraph fused = Optimise(spec, true);
  const FusionRecord* f = OnlyFusion(fused);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mask, "padding+bias");
  EXPECT_EQ(f->bias, "bias");
  EXPECT_FALSE(f->causal);
  ExpectSameOutputs(spec, kAllValues);
}

TEST(PositionBiasTest, T5DecoderFusesAsCausalPaddingPlusBias) {
  const Spec spec{Form::kT5Decoder, BiasShape::kT5};
  OptimisedAttentionGraph fused = Optimise(spec, true);
  const FusionRecord* f = OnlyFusion(fused);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->mask, "causal+padding+bias");
  EXPECT_TRUE(f->causal);
  ExpectSameOutputs(spec, kAllValues);
}

// Finite entries beyond the fast path's range (finfo.min at some keys, as a
// bias with the padding folded in would hold, and 1e35): those rows are
// computed from the fills, as the subgraph computes them, on every backend.
TEST(PositionBiasTest, HugeFiniteBiasIsComputedAsTheSubgraphDoes) {
  for (Form form : {Form::kMpt, Form::kT5Encoder, Form::kT5Decoder}) {
    SCOPED_TRACE(static_cast<int>(form));
    const Spec spec{form, form == Form::kMpt ? BiasShape::kAlibi : BiasShape::kT5};
    OptimisedAttentionGraph fused = Optimise(spec, true);
    OptimisedAttentionGraph unfused = Optimise(spec, false);
    ASSERT_EQ(fused.report.fusions.size(), 1u);
    for (int64_t t : {1, 9, 40}) {
      for (float huge : {kFinfoMin, -1e35f, 1e35f, -kFinfoMin}) {
        std::vector<Tensor> inputs = Inputs(spec, t, Values::kRandom, false);
        float* bias = inputs[2].data<float>();
        for (int64_t k = 0; k < inputs[2].num_elements(); k += 3) bias[k] = huge;
        auto want = RunWith(*unfused.graph, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
        ASSERT_TRUE(want.ok()) << want.status();
        for (const Backend& b : Backends()) {
          auto got = RunWith(*fused.graph, inputs, b);
          ASSERT_TRUE(got.ok()) << b.name << ": " << got.status();
          EXPECT_EQ(DiffAt((*want)[0], (*got)[0]), "") << b.name << " T=" << t << " bias " << huge;
        }
      }
    }
  }
}

TEST(PositionBiasTest, MultipliedBiasIsNotABias) {
  OptimisedAttentionGraph r = Optimise({Form::kMultiplied, BiasShape::kAlibi}, true);
  for (const FusionRecord& f : r.report.fusions) {
    EXPECT_TRUE(f.bias.empty());
    EXPECT_FALSE(absl::StrContains(f.mask, "bias"));
    EXPECT_NE(f.mask, "causal");
  }
}

TEST(PositionBiasTest, BiasThatAlsoHidesKeysIsNotABias) {
  OptimisedAttentionGraph r = Optimise({Form::kBiasAlsoMasks, BiasShape::kAlibi}, true);
  EXPECT_TRUE(r.report.fusions.empty());
  ASSERT_FALSE(r.report.rejected.empty());
  EXPECT_TRUE(absl::StrContains(r.report.rejected[0].reason, "read 2 times")) << r.report.rejected[0].reason;
}

TEST(PositionBiasTest, FillABiasCouldReachIsNotFusedWithTheBias) {
  OptimisedAttentionGraph r = Optimise({Form::kWeakFill, BiasShape::kAlibi}, true);
  for (const FusionRecord& f : r.report.fusions) EXPECT_TRUE(f.bias.empty());
  if (r.report.fusions.empty()) {
    ASSERT_FALSE(r.report.rejected.empty());
    EXPECT_TRUE(absl::StrContains(r.report.rejected[0].reason, "a fill a bias could reach"))
        << r.report.rejected[0].reason;
  }
}

// Max(s + bias, -50) is s + bias at every score the probes use, but not for a
// bias below -50: it must not be taken for a bias plus a mask.
TEST(PositionBiasTest, FloorAfterTheBiasIsNotFusedWithTheBias) {
  const Spec spec{Form::kMaxFloor, BiasShape::kAlibi};
  OptimisedAttentionGraph r = Optimise(spec, true);
  for (const FusionRecord& f : r.report.fusions) EXPECT_TRUE(f.bias.empty()) << f.mask;
  OptimisedAttentionGraph unfused = Optimise(spec, false);
  std::vector<Tensor> inputs = Inputs(spec, 9, Values::kRandom, false);
  for (int64_t k = 0; k < inputs[2].num_elements(); ++k) inputs[2].data<float>()[k] = -100.0f - k;
  auto want = RunWith(*unfused.graph, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
  auto got = RunWith(*r.graph, inputs, {"default", AttentionBackend::kAuto, std::nullopt});
  ASSERT_TRUE(want.ok() && got.ok());
  EXPECT_EQ(DiffAt((*want)[0], (*got)[0]), "");
}

}  // namespace
}  // namespace attune::testing
