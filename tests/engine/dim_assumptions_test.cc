// A decoder whose attention_mask length is its own symbol: the session fuses
// under the convention mask length = past + seq, checks it on every run, and a
// run that breaks it gets what the unfused graph computes.
#include "engine/dim_assumptions.h"

#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"
#include "engine/session_impl.h"
#include "tests/common/compare.h"
#include "tests/common/graph_builder.h"

namespace attune {
namespace {

using testing::Attrs;
using testing::Dims;
using testing::GraphBuilder;
using testing::Int64s;

constexpr int64_t kHeads = 2, kHeadDim = 8, kBuffer = 16;

// GPT-2's masking as exports write it, with the key length taken from the
// mask: bias[:, :, L-T:L, :L] (L = attention_mask.shape[1], T =
// input_ids.shape[1]) by Where, then (1 - attention_mask) * finfo.min added.
// The tokens are only counted; q, k and v come in as inputs.
std::unique_ptr<Graph> MaskLengthDecoder() {
  GraphBuilder b(17);
  Value* ids = b.Input("input_ids", ElementType::kInt64, Dims({"batch", "seq"}));
  Value* mask = b.Input("attention_mask", ElementType::kInt64, Dims({"batch", "total_seq"}));
  auto head_input = [&](const char* name, const char* len) {
    return b.Input(name, ElementType::kFloat32, Dims({"batch", kHeads, len, kHeadDim}));
  };
  Value* q = head_input("q", "seq");
  Value* k = head_input("k", "seq");
  Value* v = head_input("v", "seq");
  Value* past_key = head_input("past_key", "past_seq");
  Value* past_value = head_input("past_value", "past_seq");
  Value* present_key = b.Node("Concat", {past_key, k}, Attrs({{"axis", int64_t{2}}}), "present_key");
  Value* present_value = b.Node("Concat", {past_value, v}, Attrs({{"axis", int64_t{2}}}), "present_value");
  Value* kt = b.Node("Transpose", {present_key}, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}));
  Value* scores = b.Node("MatMul", {q, kt});
  scores = b.Node("Mul", {scores, b.Constant("scale", Tensor::Scalar<float>(1.0f / std::sqrt(float{kHeadDim})))});

  Value* t = b.Node("Shape", {ids}, Attrs({{"start", int64_t{1}}, {"end", int64_t{2}}}));
  Value* l = b.Node("Shape", {mask}, Attrs({{"start", int64_t{1}}, {"end", int64_t{2}}}));
  Tensor bias = *Tensor::Create(ElementType::kBool, {1, 1, kBuffer, kBuffer});
  for (int64_t i = 0; i < kBuffer; ++i)
    for (int64_t j = 0; j < kBuffer; ++j) bias.data<bool>()[i * kBuffer + j] = j <= i;
  Value* rows = b.Node("Slice", {b.Constant("bias", bias), b.Node("Sub", {l, t}), l, b.Constant("ax2", Int64s({2}))});
  Value* causal = b.Node("Slice", {rows, b.Constant("zero", Int64s({0})), l, b.Constant("ax3", Int64s({3}))});
  const float lowest = std::numeric_limits<float>::lowest();
  Value* w = b.Node("Where", {causal, scores, b.Constant("fill", Tensor::Scalar<float>(lowest))});
  Value* m = b.Node("Cast", {mask}, Attrs({{"to", int64_t{1}}}));
  m = b.Node("Unsqueeze", {m, b.Constant("axes", Int64s({1, 2}))});
  m = b.Node("Sub", {b.Constant("one", Tensor::Scalar<float>(1.0f)), m});
  m = b.Node("Mul", {m, b.Constant("lowest", Tensor::Scalar<float>(lowest))});
  w = b.Node("Add", {w, m});
  Value* p = b.Node("Softmax", {w}, Attrs({{"axis", int64_t{-1}}}));
  Value* out = b.Node("MatMul", {p, present_value}, {}, "logits");
  // Declared as an exporter declares graph outputs.
  out->set_shape(Dims({"batch", kHeads, "seq", kHeadDim}));
  present_key->set_shape(Dims({"batch", kHeads, "total_seq", kHeadDim}));
  present_value->set_shape(Dims({"batch", kHeads, "total_seq", kHeadDim}));
  for (Value* o : {out, present_key, present_value}) {
    o->set_type(ElementType::kFloat32);
    b.Output(o);
  }
  return b.Build();
}

struct Sizes {
  int64_t batch, seq, past, mask_len;
  std::vector<int64_t> mask;  // batch x mask_len
};

NamedTensors Inputs(const Sizes& s) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  auto heads = [&](int64_t len) {
    Tensor x = *Tensor::Create(ElementType::kFloat32, {s.batch, kHeads, len, kHeadDim});
    for (float& f : x.values<float>()) f = dist(rng);
    return x;
  };
  NamedTensors in;
  in.emplace_back("input_ids", *Tensor::Create(ElementType::kInt64, {s.batch, s.seq}));
  in.emplace_back("attention_mask", *Tensor::FromVector<int64_t>({s.batch, s.mask_len}, s.mask));
  in.emplace_back("q", heads(s.seq));
  in.emplace_back("k", heads(s.seq));
  in.emplace_back("v", heads(s.seq));
  in.emplace_back("past_key", heads(s.past));
  in.emplace_back("past_value", heads(s.past));
  return in;
}

std::unique_ptr<SessionImpl> Session(bool fuse) {
  SessionOptions options;
  options.fuse = fuse;
  options.threads = 1;
  auto session = SessionImpl::Create(MaskLengthDecoder(), options);
  EXPECT_TRUE(session.ok()) << session.status();
  return *std::move(session);
}

TEST(DimAssumptionsTest, FindsTheMaskLengthOfADecoder) {
  auto graph = MaskLengthDecoder();
  const std::vector<DimAssumption> found = FindDecoderDimAssumptions(*graph);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].input, "attention_mask");
  EXPECT_EQ(found[0].axis, 1);
  EXPECT_EQ(found[0].symbol, "total_seq");
  EXPECT_EQ(found[0].equals, Dim::Symbol("past_seq+seq"));
}

// The session keeps the specialised graph only when it fuses more than the
// graph without the relation: a recorded assumption means the block needed it.
TEST(DimAssumptionsTest, FusesUnderTheConventionOnly) {
  auto fused = Session(true);
  const FusionReport& report = fused->report();
  ASSERT_EQ(report.assumptions.size(), 1u);
  ASSERT_EQ(report.fusions.size(), 1u);
  EXPECT_EQ(report.fusions[0].mask, "causal+padding");
  EXPECT_EQ(report.fusions[0].key_padding, "attention_mask");
  EXPECT_EQ(fused->graph().inputs()[1]->shape(), Dims({"batch", "past_seq+seq"}));
}

// A mask declared with the relation needs no assumption.
TEST(DimAssumptionsTest, AMaskDeclaredAsPastPlusSeqNeedsNone) {
  auto graph = MaskLengthDecoder();
  graph->inputs()[1]->set_shape(Dims({"batch", "past_seq + seq"}));
  EXPECT_TRUE(FindDecoderDimAssumptions(*graph).empty());
  SessionOptions options;
  options.threads = 1;
  auto session = SessionImpl::Create(std::move(graph), options);
  ASSERT_TRUE(session.ok()) << session.status();
  EXPECT_TRUE((*session)->report().assumptions.empty());
  EXPECT_EQ((*session)->report().fusions.size(), 1u);
  // The declared relation is checked: a mask of another length is refused, naming it.
  auto run = (*session)->Run(Inputs({1, 2, 3, 4, {1, 1, 1, 1}}));
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("attention_mask"), std::string::npos) << run.status();
}

void ExpectSameAsUnfused(const Sizes& s) {
  auto fused = Session(true);
  auto unfused = Session(false);
  const NamedTensors in = Inputs(s);
  auto got = fused->Run(in);
  auto want = unfused->Run(in);
  ASSERT_EQ(got.ok(), want.ok()) << "fused: " << got.status() << "\nunfused: " << want.status();
  if (!want.ok()) return;
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    SCOPED_TRACE((*want)[i].first);
    EXPECT_EQ(testing::CompareTensors((*got)[i].second, (*want)[i].second, {1e-5, 1e-5}), "");
  }
}

TEST(DimAssumptionsTest, RunsThatKeepTheConventionMatchTheUnfusedGraph) {
  // Row 1 left-padded by two.
  ExpectSameAsUnfused({2, 3, 4, 7, {1, 1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1}});
  ExpectSameAsUnfused({1, 5, 0, 5, {1, 1, 1, 1, 1}});
}

// attention_mask of length 1 against 4 keys: the unfused graph broadcasts it
// (every key padded in batch row 0: a uniform softmax under the finite fill).
// The fused op's padding input would be one key long; the run must take the
// unspecialised plan and compute what the graph computes.
TEST(DimAssumptionsTest, ARunThatBreaksTheConventionRunsTheUnspecialisedGraph) {
  ExpectSameAsUnfused({2, 1, 3, 1, {0, 1}});
  // And a mismatch the unfused graph itself refuses is refused too.
  ExpectSameAsUnfused({1, 2, 3, 4, {1, 1, 1, 1}});
}

}  // namespace
}  // namespace attune
