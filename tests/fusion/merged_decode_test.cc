// OPT's self-attention with a KV cache (models/merged_opt_decode and its
// two-layer form): the causal part's key length is past + seq, the padding's
// is attention_mask's own length. The fused graph must give what the unfused
// one gives for left and right padding, with and without a past, for an
// attention_mask of one key (ONNX broadcasts it to every key), and fail
// where the unfused graph fails: a length that is neither 1 nor the key count.
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/fusion/model_pair.h"

namespace attune::testing {
namespace {

constexpr int64_t kB = 2, kHeads = 4, kHeadDim = 16, kModel = 64;

using Pair = ModelPair;
Pair Load(const std::string& model) { return LoadModelPair(model); }

Tensor Normal(std::vector<int64_t> shape, std::mt19937& rng) {
  Tensor t = *Tensor::Create(ElementType::kFloat32, shape);
  std::normal_distribution<float> n;
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = n(rng);
  return t;
}

// attention_mask (B, keys): row 1 padded by `pad` on the left or the right;
// with one key, row 1 is that key padded.
Tensor Mask(int64_t keys, int64_t pad, bool left) {
  Tensor m = *Tensor::Create(ElementType::kInt64, {kB, keys});
  for (int64_t b = 0; b < kB; ++b)
    for (int64_t j = 0; j < keys; ++j) {
      const bool padded = b == 1 && (left ? j < pad : j >= keys - pad);
      m.data<int64_t>()[b * keys + j] = padded ? 0 : 1;
    }
  return m;
}

// Inputs in graph-input order: hidden_states, attention_mask, then each layer's past key and value.
std::vector<Tensor> Inputs(const Graph& g, int64_t t, int64_t past, Tensor mask) {
  std::mt19937 rng(static_cast<uint32_t>(t * 31 + past));
  std::vector<Tensor> in;
  for (const Value* v : g.inputs()) {
    if (v->is_constant()) continue;
    if (v->name() == "hidden_states") in.push_back(Normal({kB, t, kModel}, rng));
    else if (v->name() == "attention_mask") in.push_back(mask);
    else in.push_back(Normal({kB, kHeads, past, kHeadDim}, rng));
  }
  return in;
}

double Difference(const Pair& p, const std::vector<Tensor>& in) { return OutputDifference(*p.unfused, *p.fused, in); }

class MergedDecode : public ::testing::TestWithParam<std::string> {};

TEST_P(MergedDecode, FusesWithABroadcastKeyPadding) {
  Pair p = Load(GetParam());
  ASSERT_NE(p.fused, nullptr);
  ASSERT_FALSE(p.report.fusions.empty());
  for (const FusionRecord& f : p.report.fusions) {
    EXPECT_EQ(f.mask, "causal+padding");
    EXPECT_TRUE(f.has_past);
    EXPECT_EQ(f.key_padding, "attention_mask");
  }
  int broadcast = 0;
  for (const Node* n : p.fused->nodes())
    if (n->op_type() == "MultiHeadAttention")
      broadcast += n->attributes().GetString("key_padding_length", "").value_or("") == "broadcast_viewed";
  EXPECT_EQ(broadcast, static_cast<int>(p.report.fusions.size()));
}

TEST_P(MergedDecode, LeftAndRightPaddingWithAndWithoutAPast) {
  Pair p = Load(GetParam());
  ASSERT_NE(p.fused, nullptr);
  for (int64_t past : {0, 5})
    for (bool left : {true, false})
      for (int64_t t : {1, 3}) {
        const int64_t keys = past + t;
        EXPECT_LT(Difference(p, Inputs(*p.fused, t, past, Mask(keys, std::min<int64_t>(2, keys), left))), 1e-5)
            << "past " << past << " T " << t << (left ? " left" : " right");
      }
}

TEST_P(MergedDecode, AMaskOfOneKeyBroadcastsAsInTheUnfusedGraph) {
  Pair p = Load(GetParam());
  ASSERT_NE(p.fused, nullptr);
  // Row 1's one entry is 0: every key of that row is hidden (a row of fills).
  for (int64_t past : {0, 5}) EXPECT_LT(Difference(p, Inputs(*p.fused, 3, past, Mask(1, 1, true))), 1e-5);
}

TEST_P(MergedDecode, AMaskOfAnotherLengthFailsAsTheUnfusedGraphDoes) {
  Pair p = Load(GetParam());
  ASSERT_NE(p.fused, nullptr);
  // 4 keys against past 5 + T 3; and 3 keys against one (past 0, T 1): broadcast, they give the
  // scores 3 keys, which the view back to one key refuses.
  for (auto [t, past, keys] : {std::tuple<int64_t, int64_t, int64_t>{3, 5, 4}, {1, 0, 3}}) {
    const std::vector<Tensor> in = Inputs(*p.fused, t, past, Mask(keys, 0, true));
    auto want = RunGraph(*p.unfused, DefaultKernelRegistry(), in);
    auto got = RunGraph(*p.fused, DefaultKernelRegistry(), in);
    ASSERT_FALSE(want.ok());
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.status().code(), want.status().code());
    EXPECT_TRUE(absl::StrContains(got.status().message(), "key padding mask has")) << got.status();
  }
}

INSTANTIATE_TEST_SUITE_P(Models, MergedDecode, ::testing::Values("merged_opt_decode", "merged_opt_decode_2layers"));

}  // namespace
}  // namespace attune::testing
