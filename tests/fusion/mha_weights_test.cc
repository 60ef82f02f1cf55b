// nn.MultiheadAttention with need_weights=True (models/torch_mha_weights*,
// written by models/gen/catalog_torch_modules.py): the Softmax's
// probabilities are read by P·V and by the weights the module returns
// (averaged over the heads, or per head). Each block fuses with the fused
// op's probabilities output (output 3) standing for the Softmax; fused and
// unfused graphs agree within 1e-5 on both outputs (NaN where the other is
// NaN) on the stored inputs, on longer ones padded on the left, the right
// and both sides, and on inputs with NaN, inf and values whose scores
// overflow float32. Models without the weights keep their plans (the
// probabilities output is asked for only where the Softmax is read twice).
// Then a 3-D (B·H, T, S) attn_mask input: one mask per head where B·H is
// proven, never causal; left unfused with its reason where it is not.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/schema/multi_head_attention.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/fusion/model_pair.h"

namespace attune::testing {
namespace {

constexpr int64_t kModel = 64;

// The largest difference of two tensors where NaN must meet NaN and an
// infinity the same infinity; infinite when they do not.
double NanAwareDifference(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double worst = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    if (std::isnan(x) || std::isnan(y)) {
      if (std::isnan(x) != std::isnan(y)) return INFINITY;
      continue;
    }
    if (x == y) continue;
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

// The largest difference over every output of the two graphs, NaN-aware; infinite when either fails.
double Difference(const Graph& unfused, const Graph& fused, const std::vector<Tensor>& inputs) {
  auto want = RunGraph(unfused, DefaultKernelRegistry(), inputs);
  auto got = RunGraph(fused, DefaultKernelRegistry(), inputs);
  EXPECT_TRUE(want.ok()) << want.status();
  EXPECT_TRUE(got.ok()) << got.status();
  if (!want.ok() || !got.ok() || want->size() != got->size()) return INFINITY;
  double error = 0;
  for (size_t i = 0; i < want->size(); ++i) error = std::max(error, NanAwareDifference((*want)[i], (*got)[i]));
  return error;
}

struct Layout {
  bool seq_first = false;
  bool padding = false;
};

Layout LayoutOf(const Graph& g) {
  Layout l;
  const Value* x = g.inputs()[0];
  // (T, B, C) sequence-first: its batch dim is the second, named "batch" or of the sample's 2.
  l.seq_first = x->shape() && (*x->shape())[1].ToString() == "batch";
  l.padding = g.inputs().size() > 1;
  return l;
}

// x (3 rows, t tokens) from `fill`, and a key_padding_mask (True pads) whose
// rows are padded on the left, on the right and on both sides.
std::vector<Tensor> Inputs(const Layout& l, int64_t t, const std::vector<float>& x_rows) {
  const int64_t batch = 3;
  std::vector<float> x(batch * t * kModel);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t c = 0; c < kModel; ++c) {
        const int64_t at = l.seq_first ? (i * batch + b) * kModel + c : (b * t + i) * kModel + c;
        x[at] = x_rows[((b * t + i) * kModel + c) % x_rows.size()];
      }
  std::vector<Tensor> in = {*Tensor::FromVector<float>(
      l.seq_first ? std::vector<int64_t>{t, batch, kModel} : std::vector<int64_t>{batch, t, kModel}, x)};
  if (l.padding) {
    std::vector<uint8_t> pads(batch * t, 0);
    for (int64_t j = 0; j < std::min<int64_t>(3, t - 1); ++j) pads[j] = 1;                 // left
    for (int64_t j = t - std::min<int64_t>(4, t - 1); j < t; ++j) pads[t + j] = 1;         // right
    if (t > 4) pads[2 * t] = pads[2 * t + 1] = pads[3 * t - 1] = 1;                        // both
    auto mask = Tensor::Create(ElementType::kBool, {batch, t});
    for (int64_t i = 0; i < batch * t; ++i) mask->data<bool>()[i] = pads[i] != 0;
    in.push_back(*mask);
  }
  return in;
}

std::vector<float> Normal(uint32_t seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  std::vector<float> v(4096 + 7);
  for (float& x : v) x = normal(gen);
  return v;
}

std::vector<Tensor> StoredInputs(const std::string& model, const Graph& g) {
  std::vector<Tensor> in;
  for (const Value* v : g.inputs()) {
    auto t = ReadNpyFile((std::filesystem::path(SourceDir()) / "models" / model / "inputs" / (v->name() + ".npy")).string());
    EXPECT_TRUE(t.ok()) << t.status();
    in.push_back(t.ok() ? *t : Tensor());
  }
  return in;
}

class WeightsModelTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WeightsModelTest, FusesWithTheProbabilitiesOutputAndMatchesTheUnfusedGraph) {
  const std::string model = GetParam();
  ModelPair p = LoadModelPair(model);
  ASSERT_NE(p.fused, nullptr);
  ASSERT_EQ(p.report.fusions.size(), 1u);
  const FusionRecord& f = p.report.fusions[0];
  EXPECT_EQ(f.num_heads, 4);
  EXPECT_FALSE(f.weights.empty()) << "the report does not name the probabilities the weights are read from";
  EXPECT_EQ(CountOps(*p.fused, "Softmax"), 0);
  int with_probabilities = 0;
  for (const Node* n : p.fused->nodes())
    if (mha::IsMultiHeadAttention(*n) && n->output(mha::kOutputProbabilities) != nullptr) ++with_probabilities;
  EXPECT_EQ(with_probabilities, 1);
  EXPECT_EQ(p.fused->outputs().size(), 2u);  // y and the weights

  EXPECT_LE(Difference(*p.unfused, *p.fused, StoredInputs(model, *p.unfused)), 1e-5);
  const Layout l = LayoutOf(*p.unfused);
  const Value* x = p.unfused->inputs()[0];
  const bool dynamic = !(*x->shape())[l.seq_first ? 0 : 1].is_known();
  const std::vector<int64_t> lengths = dynamic ? std::vector<int64_t>{1, 5, 13, 40} : std::vector<int64_t>{};
  for (int64_t t : lengths) {
    if (!dynamic) break;
    EXPECT_LE(Difference(*p.unfused, *p.fused, Inputs(l, t, Normal(11u + t))), 1e-5) << "T = " << t;
    // NaN, +inf and -inf in x; then values whose scores overflow float32.
    std::vector<float> odd = Normal(23u + t);
    odd[5] = NAN;
    odd[kModel * 2 + 9] = INFINITY;
    odd[kModel * 7 + 3] = -INFINITY;
    EXPECT_LE(Difference(*p.unfused, *p.fused, Inputs(l, t, odd)), 1e-5) << "T = " << t << " with NaN and inf";
    std::vector<float> huge = Normal(31u + t);
    for (float& v : huge) v *= 3e37f;
    EXPECT_LE(Difference(*p.unfused, *p.fused, Inputs(l, t, huge)), 1e-5 * 3e37f) << "T = " << t << " overflowing";
  }
}

INSTANTIATE_TEST_SUITE_P(Models, WeightsModelTest,
                         ::testing::Values("torch_mha_weights", "torch_mha_weights_per_head_op14",
                                           "torch_mha_weights_causal_op14", "torch_mha_weights_padding_op17",
                                           "torch_mha_weights_plain_op17", "torch_mha_weights_bool_per_head_op17"));

// Without the weights the fused op is asked for no probabilities: the flash kernels run as before.
TEST(WeightsModelTest, AModelWithoutTheWeightsAsksForNoProbabilities) {
  for (const char* model : {"torch_mha_causal_padding", "torch_mha_padding_op17", "torch_transformer"}) {
    ModelPair p = LoadModelPair(model);
    ASSERT_NE(p.fused, nullptr);
    for (const FusionRecord& f : p.report.fusions) EXPECT_TRUE(f.weights.empty()) << model;
    for (const Node* n : p.fused->nodes())
      if (mha::IsMultiHeadAttention(*n)) EXPECT_EQ(n->output(mha::kOutputProbabilities), nullptr) << model;
  }
}

// nn.MultiheadAttention with a 3-D (B·H, T, S) attn_mask input, one mask per
// batch and head. With static axes its first dim is B·H = 8: it is viewed as
// (B, H, T, S) and fused as an explicit mask with 4 heads, never causal; the
// fused graph gives the unfused one's outputs for other masks per head,
// rows with every key hidden (NaN, as PyTorch gives) included. With a
// dynamic first dim of its own the view is not proven and the block stays
// unfused, with the reason.
std::vector<Tensor> HeadMaskInputs(uint32_t seed, bool hide_a_row) {
  const int64_t t = 13, batch = 2, heads = 4;
  std::vector<float> x = Normal(seed);
  x.resize(t * batch * kModel);
  for (size_t i = 4096 + 7; i < x.size(); ++i) x[i] = x[i % 4096];
  std::mt19937 gen(seed);
  auto mask = Tensor::Create(ElementType::kBool, {batch * heads, t, t});
  for (int64_t bh = 0; bh < batch * heads; ++bh)
    for (int64_t i = 0; i < t; ++i)
      for (int64_t j = 0; j < t; ++j)
        mask->data<bool>()[(bh * t + i) * t + j] = j != i && gen() % 3 == 0;  // True hides; every row sees itself
  if (hide_a_row)
    for (int64_t j = 0; j < t; ++j) mask->data<bool>()[(5 * t + 2) * t + j] = true;
  return {*Tensor::FromVector<float>({t, batch, kModel}, x), *mask};
}

TEST(HeadMaskTest, AStaticPerHeadMaskFusesAsAnExplicitMaskWithTheTrueHeads) {
  ModelPair p = LoadModelPair("torch_mha_head_mask_static");
  ASSERT_NE(p.fused, nullptr);
  ASSERT_EQ(p.report.fusions.size(), 1u);
  EXPECT_EQ(p.report.fusions[0].mask, "explicit");
  EXPECT_FALSE(p.report.fusions[0].causal);
  EXPECT_EQ(p.report.fusions[0].num_heads, 4);
  EXPECT_LE(Difference(*p.unfused, *p.fused, StoredInputs("torch_mha_head_mask_static", *p.unfused)), 1e-5);
  for (uint32_t seed : {1u, 2u, 3u})
    EXPECT_LE(Difference(*p.unfused, *p.fused, HeadMaskInputs(seed, seed == 3u)), 1e-5) << "seed " << seed;
}

TEST(HeadMaskTest, AMaskWhoseFirstDimIsNotProvenTheHeadsStaysUnfusedWithItsReason) {
  ModelPair p = LoadModelPair("torch_mha_trap_head_mask");
  ASSERT_NE(p.fused, nullptr);
  EXPECT_TRUE(p.report.fusions.empty());
  bool said = false;
  for (const RejectedCandidate& r : p.report.rejected)
    said = said || absl::StrContains(r.reason, "dim 0 of the probabilities (?) and of V (4*batch)");
  EXPECT_TRUE(said) << "no rejection says that the merged dim of the masked scores is not proven";
}

}  // namespace
}  // namespace attune::testing
