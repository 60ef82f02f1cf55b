// The RMS norm fusion on chains written as torch exports LlamaRMSNorm and
// its relatives (x² as Pow or Mul, 1/sqrt as Div(1, Sqrt), Reciprocal or
// Pow(-0.5), or x / Sqrt; the weight on either side or absent; ReduceMean's
// axes as an attribute or, from opset 18, an input; a float16 model's
// Cast pair): each becomes one RMSNormalization node, and the fused graph
// gives the unfused graph's outputs on rows of random values, huge values
// (whose squares overflow), zeros, and rows with a NaN or an infinity.
// Near misses are rejected with their reason.
#include <iostream>

#include "absl/strings/match.h"
#include "tests/fusion/op_fusion_graphs.h"

namespace attune::testing {
namespace {

constexpr int64_t kFeatures = 8;

Value* C(GraphBuilder& b, ElementType t, double v) { return ScalarConstant(b, t, v); }

enum class Square { kPow, kMul };
enum class Inverse { kDivOne, kReciprocal, kPowHalf, kDivide };
enum class Weight { kLeft, kRight, kNone };

struct Form {
  Square square = Square::kPow;
  Inverse inverse = Inverse::kDivOne;
  Weight weight = Weight::kLeft;
  bool half = false;  // float16 x and weight, the chain in float32 between Casts
  int opset = 17;
  std::vector<int64_t> axes = {-1};
  int64_t keepdims = 1;
  double epsilon = 1e-6;
  bool sqrt_read_outside = false;
  bool weight_of_symbolic_length = false;
};

Value* RmsNorm(GraphBuilder& b, Value* x, const Form& f) {
  const ElementType chain = ElementType::kFloat32;
  Value* xf = f.half ? b.Node("Cast", {x}, Attrs({{"to", int64_t{1}}})) : x;
  Value* square = f.square == Square::kPow ? b.Node("Pow", {xf, C(b, chain, 2.0)}) : b.Node("Mul", {xf, xf});
  Attributes reduce;
  if (f.keepdims != 1) reduce.Set("keepdims", f.keepdims);
  Value* mean;
  if (f.opset >= 18) {
    mean = b.Node("ReduceMean", {square, b.Constant("axes", Int64s(f.axes))}, reduce);
  } else {
    reduce.Set("axes", f.axes);
    mean = b.Node("ReduceMean", {square}, reduce);
  }
  Value* shifted = b.Node("Add", {mean, C(b, chain, f.epsilon)});
  Value* normed;
  switch (f.inverse) {
    case Inverse::kDivOne:
      normed = b.Node("Mul", {xf, b.Node("Div", {C(b, chain, 1.0), b.Node("Sqrt", {shifted})})});
      break;
    case Inverse::kReciprocal:
      normed = b.Node("Mul", {b.Node("Reciprocal", {b.Node("Sqrt", {shifted})}), xf});
      break;
    case Inverse::kPowHalf: normed = b.Node("Mul", {xf, b.Node("Pow", {shifted, C(b, chain, -0.5)})}); break;
    case Inverse::kDivide: normed = b.Node("Div", {xf, b.Node("Sqrt", {shifted})}); break;
  }
  if (f.sqrt_read_outside)
    for (Node* n : b.graph().nodes())
      if (n->op_type() == "Sqrt") b.Output(b.Node("Neg", {n->output(0)}));
  if (f.half) normed = b.Node("Cast", {normed}, Attrs({{"to", int64_t{10}}}));
  if (f.weight == Weight::kNone) return normed;
  const ElementType wt = f.half ? ElementType::kFloat16 : ElementType::kFloat32;
  Value* w;
  if (f.weight_of_symbolic_length) {
    w = b.Input("w", wt, Dims({"d"}));
  } else {
    std::vector<float> values;
    for (int64_t i = 0; i < kFeatures; ++i) values.push_back(0.5f + 0.25f * static_cast<float>(i));
    Tensor t = Floats({kFeatures}, values);
    if (f.half) {
      Tensor h = *Tensor::Create(ElementType::kFloat16, {kFeatures});
      for (int64_t i = 0; i < kFeatures; ++i) h.data<Float16>()[i] = FloatToHalf(values[i]);
      t = h;
    }
    w = b.Constant("weight", t);
  }
  return f.weight == Weight::kLeft ? b.Node("Mul", {w, normed}) : b.Node("Mul", {normed, w});
}

std::unique_ptr<Graph> RmsNormGraph(const Form& f) {
  GraphBuilder b(f.opset);
  Value* x = b.Input("x", f.half ? ElementType::kFloat16 : ElementType::kFloat32, Dims({"batch", "seq", kFeatures}));
  b.Output(RmsNorm(b, x, f));
  return b.Build();
}

// Rows of 8: random, large, tiny, zeros, huge (x² overflows), one NaN, one +inf, one -inf.
std::vector<float> RowInputs(bool half) {
  std::vector<float> v;
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (int i = 0; i < 40 * kFeatures; ++i) v.push_back(normal(rng));
  for (float scale : {20.0f, 1e-3f, 0.0f, half ? 300.0f : 1e20f}) {
    for (int i = 0; i < kFeatures; ++i) v.push_back(scale * normal(rng));
  }
  for (float special : {kNaN, kInf, -kInf}) {
    for (int i = 0; i < kFeatures; ++i) v.push_back(i == 3 ? special : normal(rng));
  }
  return v;
}

struct Case {
  std::string name;
  Form form;
};

Form With(const std::function<void(Form&)>& edit) {
  Form f;
  edit(f);
  return f;
}

std::vector<Case> FusedCases() {
  return {
      {"llama", Form{}},
      {"mul_square_reciprocal_weight_right", With([](Form& f) {
         f.square = Square::kMul;
         f.inverse = Inverse::kReciprocal;
         f.weight = Weight::kRight;
       })},
      {"pow_minus_half", With([](Form& f) { f.inverse = Inverse::kPowHalf; })},
      {"divide_by_rms", With([](Form& f) { f.inverse = Inverse::kDivide; })},
      {"no_weight", With([](Form& f) { f.weight = Weight::kNone; })},
      {"opset18_axes_input", With([](Form& f) { f.opset = 18; })},
      {"axis_2_of_rank_3", With([](Form& f) { f.axes = {2}; })},
      {"float16_cast_pair", With([](Form& f) { f.half = true; })},
      {"float16_cast_pair_no_weight", With([](Form& f) {
         f.half = true;
         f.weight = Weight::kNone;
       })},
  };
}

class RmsNormFusionTest : public ::testing::TestWithParam<Case> {};

TEST_P(RmsNormFusionTest, FusedMatchesUnfused) {
  const Form& f = GetParam().form;
  OptimisedChain unfused = OptimiseChain(RmsNormGraph(f), false);
  OptimisedChain fused = OptimiseChain(RmsNormGraph(f), true);
  ASSERT_TRUE(unfused.status.ok()) << unfused.status;
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  for (const RejectedCandidate& r : fused.report.rejected)
    std::cout << "  rejected " << r.pattern << ": " << r.reason << "\n";
  EXPECT_EQ(CountOps(*fused.graph, "RMSNormalization"), 1);
  for (const char* op : {"ReduceMean", "Sqrt", "Mul", "Div", "Pow", "Reciprocal", "Add", "Cast"})
    EXPECT_EQ(CountOps(*fused.graph, op), 0) << op << " left of the chain";
  ASSERT_EQ(fused.report.op_fusions.size(), 1u);
  EXPECT_EQ(fused.report.op_fusions[0].pattern, "rms_norm");
  EXPECT_TRUE(fused.report.rejected.empty());

  const ElementType type = f.half ? ElementType::kFloat16 : ElementType::kFloat32;
  const Tensor input = ChainInput(RowInputs(f.half), type, kFeatures);
  auto want = RunGraph(*unfused.graph, DefaultKernelRegistry(), {input});
  auto got = RunGraph(*fused.graph, DefaultKernelRegistry(), {input});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  // float16: the chain rounds x · inv to float16 before the weight, the op once.
  const double tolerance = f.half ? 2 * 9.765625e-4 : 1e-6;
  const Divergence d = Diverge(input, (*want)[0], (*got)[0], tolerance);
  EXPECT_EQ(d.count, 0) << "first at " << d.first;
  std::cout << "  " << GetParam().name << ": max error " << d.max_error << " of max(1, |unfused|)\n";
}

INSTANTIATE_TEST_SUITE_P(Forms, RmsNormFusionTest, ::testing::ValuesIn(FusedCases()),
                         [](const ::testing::TestParamInfo<Case>& info) { return info.param.name; });

TEST(RmsNormFusionTest, VerifyModeKeepsTheFusion) {
  OptimisedChain fused = OptimiseChain(RmsNormGraph(Form{}), true, /*verify=*/true);
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  ASSERT_EQ(fused.report.op_fusions.size(), 1u);
  EXPECT_FALSE(fused.report.op_fusions[0].undone);
  ASSERT_TRUE(fused.report.op_fusions[0].verify_max_abs_error.has_value());
  EXPECT_LE(*fused.report.op_fusions[0].verify_max_abs_error, 1e-5);
}

struct MissCase {
  std::string name;
  Form form;
  std::string reason;
};

std::vector<MissCase> MissCases() {
  return {
      {"middle_axis", With([](Form& f) { f.axes = {1}; }), "reduces axis 1, not the last one"},
      {"two_axes", With([](Form& f) { f.axes = {1, 2}; }), "reduces 2 axes"},
      {"keepdims_0", With([](Form& f) {
         f.keepdims = 0;
         f.weight = Weight::kNone;
         f.axes = {-1};
       }),
       "keepdims=0"},
      {"sqrt_read_outside", With([](Form& f) { f.sqrt_read_outside = true; }), "is also read by Neg"},
      {"negative_epsilon", With([](Form& f) { f.epsilon = -1e-6; }), "is negative"},
  };
}

class RmsNormMissTest : public ::testing::TestWithParam<MissCase> {};

TEST_P(RmsNormMissTest, RejectedWithItsReason) {
  const MissCase& c = GetParam();
  OptimisedChain fused = OptimiseChain(RmsNormGraph(c.form), true);
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  EXPECT_EQ(CountOps(*fused.graph, "RMSNormalization"), 0);
  bool found = false;
  for (const RejectedCandidate& r : fused.report.rejected) {
    std::cout << "  rejected at " << r.at << " " << r.pattern << ": " << r.reason << "\n";
    found |= r.pattern == "rms_norm" && absl::StrContains(r.reason, c.reason);
  }
  EXPECT_TRUE(found) << "no rejection says '" << c.reason << "'";
}

// A weight the op cannot take (a length not provably the normalised dim's)
// stays a Mul after a norm without a weight.
TEST(RmsNormMissTest, WeightOfUnknownLengthStaysAMul) {
  OptimisedChain fused = OptimiseChain(RmsNormGraph(With([](Form& f) { f.weight_of_symbolic_length = true; })), true);
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  EXPECT_EQ(CountOps(*fused.graph, "RMSNormalization"), 1);
  EXPECT_EQ(CountOps(*fused.graph, "Mul"), 1);
  ASSERT_EQ(fused.report.op_fusions.size(), 1u);
  EXPECT_TRUE(absl::StrContains(fused.report.op_fusions[0].attributes, "no weight"));
}

INSTANTIATE_TEST_SUITE_P(NearMisses, RmsNormMissTest, ::testing::ValuesIn(MissCases()),
                         [](const ::testing::TestParamInfo<MissCase>& info) { return info.param.name; });

}  // namespace
}  // namespace attune::testing
