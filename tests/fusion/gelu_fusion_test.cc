// The element-wise fusion on GELU and Swish chains written the ways
// exporters write them (HF gelu_new, torch's nn.GELU in both forms, BERT's
// erf GELU, FastGELU, SiLU, QuickGELU; commutative operands both ways, Mul
// and Div by constants, x³ as Pow or Mul): each becomes one Gelu or Swish
// node, and the fused graph gives the unfused graph's outputs on a grid
// over [-20, 20], random values, huge ones, NaN and ±inf, all at opset 17,
// where ONNX has neither op. Finite outputs agree within 1e-6 of
// max(1, |unfused|) in float32: relative to the value, except near 0 where
// the subgraph's own cancellation (1 + tanh y for negative x) is larger than
// that. NaN and infinities agree exactly, but for the one difference the
// rule documents (gelu_rule.h): where the subgraph multiplies x by the
// bracket before halving, it overflows to +inf above half the type's
// largest value, where Gelu returns x. Swish gives the subgraph's bits.
// Near misses are rejected with their reason.
#include <cstring>
#include <iostream>

#include "absl/strings/match.h"
#include "tests/fusion/op_fusion_graphs.h"

namespace attune::testing {
namespace {


struct ChainCase {
  std::string name;
  ChainBuilder chain;
  std::string op;       // the fused op
  std::string pattern;  // the rule that must match
  /// The subgraph multiplies x by the bracket before halving it (overflow above max/2).
  bool bracket_first = false;
  /// Swish: the fused op must give the subgraph's bits.
  bool bitwise = false;
};

Value* C(GraphBuilder& b, ElementType t, double v) { return ScalarConstant(b, t, v); }

// nn.GELU(approximate='tanh'): x·(x·x), constants on the left, ½ last.
Value* TorchGeluTanh(GraphBuilder& b, Value* x, ElementType t) {
  Value* cube = b.Node("Mul", {x, b.Node("Mul", {x, x})});
  Value* inner = b.Node("Add", {x, b.Node("Mul", {C(b, t, kCubic), cube})});
  Value* tanh = b.Node("Tanh", {b.Node("Mul", {C(b, t, kSqrt2OverPi), inner})});
  return b.Node("Mul", {C(b, t, 0.5), b.Node("Mul", {x, b.Node("Add", {C(b, t, 1.0), tanh})})});
}

// FastGELU: 0.5*x*(1+tanh(x*0.7978845608*(1+0.044715*x*x))).
Value* FastGelu(GraphBuilder& b, Value* x, ElementType t) {
  Value* half_x = b.Node("Mul", {x, C(b, t, 0.5)});
  Value* kx = b.Node("Mul", {x, C(b, t, 0.7978845608)});
  Value* cx2 = b.Node("Mul", {b.Node("Mul", {x, C(b, t, kCubic)}), x});
  Value* tanh = b.Node("Tanh", {b.Node("Mul", {kx, b.Node("Add", {cx2, C(b, t, 1.0)})})});
  return b.Node("Mul", {half_x, b.Node("Add", {tanh, C(b, t, 1.0)})});
}

// (x·(1 + tanh(k·(c·(x·x)·x + x)))) / 2: Div by 2 last, x² times x, sums swapped.
Value* GeluTanhDivTwo(GraphBuilder& b, Value* x, ElementType t) {
  Value* cube = b.Node("Mul", {b.Node("Mul", {x, x}), x});
  Value* inner = b.Node("Add", {b.Node("Mul", {cube, C(b, t, kCubic)}), x});
  Value* tanh = b.Node("Tanh", {b.Node("Div", {inner, C(b, t, 1.0 / kSqrt2OverPi)})});
  return b.Node("Div", {b.Node("Mul", {b.Node("Add", {C(b, t, 1.0), tanh}), x}), C(b, t, 2.0)});
}

// BERT: x * 0.5 * (1.0 + erf(x / sqrt(2.0))).
Value* BertGelu(GraphBuilder& b, Value* x, ElementType t) {
  Value* half_x = b.Node("Mul", {x, C(b, t, 0.5)});
  Value* erf = b.Node("Erf", {b.Node("Div", {x, C(b, t, 1.4142135623730951)})});
  return b.Node("Mul", {half_x, b.Node("Add", {erf, C(b, t, 1.0)})});
}

// nn.GELU(): (x·(erf(x/√2) + 1))·0.5.
Value* TorchGeluErf(GraphBuilder& b, Value* x, ElementType t) {
  Value* erf = b.Node("Erf", {b.Node("Div", {x, C(b, t, 1.4142135623730951)})});
  return b.Node("Mul", {b.Node("Mul", {x, b.Node("Add", {erf, C(b, t, 1.0)})}), C(b, t, 0.5)});
}

// x·(0.5·(1 + erf(0.70710678·x))): Mul by 1/√2, ½ on the bracket.
Value* GeluErfMulForm(GraphBuilder& b, Value* x, ElementType t) {
  Value* erf = b.Node("Erf", {b.Node("Mul", {C(b, t, 0.70710678), x})});
  return b.Node("Mul", {b.Node("Mul", {b.Node("Add", {C(b, t, 1.0), erf}), C(b, t, 0.5)}), x});
}

Value* Silu(GraphBuilder& b, Value* x, ElementType) { return b.Node("Mul", {b.Node("Sigmoid", {x}), x}); }

Value* QuickGelu(GraphBuilder& b, Value* x, ElementType t) {
  return b.Node("Mul", {x, b.Node("Sigmoid", {b.Node("Mul", {C(b, t, 1.702), x})})});
}

Value* SwishDiv(GraphBuilder& b, Value* x, ElementType t) {
  return b.Node("Mul", {x, b.Node("Sigmoid", {b.Node("Div", {x, C(b, t, 2.0)})})});
}

std::vector<ChainCase> FusedCases() {
  return {
      {"gelu_new", [](GraphBuilder& b, Value* x, ElementType t) { return GeluNew(b, x, t); }, "Gelu", "gelu_tanh"},
      {"torch_gelu_tanh", TorchGeluTanh, "Gelu", "gelu_tanh", true},
      {"fast_gelu", FastGelu, "Gelu", "gelu_tanh"},
      {"gelu_tanh_div_two", GeluTanhDivTwo, "Gelu", "gelu_tanh", true},
      // sqrt(2/pi) and 0.044715 a few float32 ulps off: within 1e-6, accepted.
      {"gelu_new_constants_near",
       [](GraphBuilder& b, Value* x, ElementType t) { return GeluNew(b, x, t, kCubic * (1 + 4e-7)); }, "Gelu",
       "gelu_tanh"},
      {"bert_gelu", BertGelu, "Gelu", "gelu_erf"},
      {"torch_gelu_erf", TorchGeluErf, "Gelu", "gelu_erf", true},
      {"gelu_erf_mul_form", GeluErfMulForm, "Gelu", "gelu_erf"},
      {"silu", Silu, "Swish", "swish", false, true},
      {"quick_gelu", QuickGelu, "Swish", "swish", false, true},
      {"swish_div", SwishDiv, "Swish", "swish", false, true},
  };
}

struct TypedCase {
  ChainCase c;
  ElementType type;
};

std::vector<TypedCase> TypedCases() {
  std::vector<TypedCase> out;
  for (const ChainCase& c : FusedCases())
    for (ElementType t : {ElementType::kFloat32, ElementType::kFloat16}) out.push_back({c, t});
  return out;
}

class OpFusionChainTest : public ::testing::TestWithParam<TypedCase> {};

TEST_P(OpFusionChainTest, FusedMatchesUnfused) {
  const ChainCase& c = GetParam().c;
  const ElementType type = GetParam().type;
  const bool half = type == ElementType::kFloat16;
  OptimisedChain unfused = OptimiseChain(ChainGraph(c.chain, type), false);
  OptimisedChain fused = OptimiseChain(ChainGraph(c.chain, type), true);
  ASSERT_TRUE(unfused.status.ok()) << unfused.status;
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  for (const RejectedCandidate& r : fused.report.rejected)
    std::cout << "  rejected " << r.pattern << ": " << r.reason << "\n";

  EXPECT_EQ(CountOps(*fused.graph, c.op), 1);
  for (const char* op : {"Mul", "Div", "Add", "Pow", "Tanh", "Erf", "Sigmoid"})
    EXPECT_EQ(CountOps(*fused.graph, op), 0) << op << " left of the chain";
  ASSERT_EQ(fused.report.op_fusions.size(), 1u);
  EXPECT_EQ(fused.report.op_fusions[0].op, c.op);
  EXPECT_EQ(fused.report.op_fusions[0].pattern, c.pattern);
  EXPECT_TRUE(fused.report.rejected.empty());
  EXPECT_TRUE(fused.report.fusions.empty());

  const float largest = half ? 65504.0f : std::numeric_limits<float>::max();
  const Tensor input = ChainInput(ActivationInputs(largest), type);
  auto want = RunGraph(*unfused.graph, DefaultKernelRegistry(), {input});
  auto got = RunGraph(*fused.graph, DefaultKernelRegistry(), {input});
  ASSERT_TRUE(want.ok()) << want.status();
  ASSERT_TRUE(got.ok()) << got.status();
  if (c.bitwise && !half) {
    EXPECT_EQ(std::memcmp((*want)[0].data<float>(), (*got)[0].data<float>(), (*want)[0].num_elements() * 4), 0);
  }
  // float16: the subgraph rounds every step to float16 (eps 2^-10).
  const double tolerance = c.bitwise ? 0.0 : half ? 4 * 9.765625e-4 : 1e-6;
  // The documented difference: x·(1 + t) overflows before the halving.
  auto overflow_before_halving = [&](double x, double u, double f) {
    return c.bracket_first && x > largest / 2 && u == INFINITY && f == x;
  };
  const Divergence d = Diverge(input, (*want)[0], (*got)[0], tolerance, overflow_before_halving);
  EXPECT_EQ(d.count, 0) << "first at " << d.first;
  std::cout << "  " << c.name << ": max error " << d.max_error << " of max(1, |unfused|)\n";
  if (c.bracket_first) {
    // Pin the difference down: at the largest value the subgraph says +inf, Gelu the value.
    const Tensor at_max = ChainInput({largest}, type);
    auto u = RunGraph(*unfused.graph, DefaultKernelRegistry(), {at_max});
    auto f = RunGraph(*fused.graph, DefaultKernelRegistry(), {at_max});
    ASSERT_TRUE(u.ok() && f.ok());
    EXPECT_EQ(ElementOf((*u)[0], 0), INFINITY);
    EXPECT_EQ(ElementOf((*f)[0], 0), largest);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, OpFusionChainTest, ::testing::ValuesIn(TypedCases()),
                         [](const ::testing::TestParamInfo<TypedCase>& info) {
                           return info.param.c.name + (info.param.type == ElementType::kFloat16 ? "_f16" : "_f32");
                         });

// Verify mode runs the rewrite against the subgraph and keeps it.
TEST(OpFusionChainTest, VerifyModeKeepsTheFusion) {
  for (const ChainBuilder& chain : {ChainBuilder(TorchGeluErf), ChainBuilder(QuickGelu)}) {
    OptimisedChain fused = OptimiseChain(ChainGraph(chain, ElementType::kFloat32), true, /*verify=*/true);
    ASSERT_TRUE(fused.status.ok()) << fused.status;
    ASSERT_EQ(fused.report.op_fusions.size(), 1u);
    const OpFusionRecord& f = fused.report.op_fusions[0];
    EXPECT_FALSE(f.undone);
    ASSERT_TRUE(f.verify_max_abs_error.has_value());
    EXPECT_LE(*f.verify_max_abs_error, 1e-6);
  }
}

// The pass can be switched off by name; the chain then stays, unreported.
TEST(OpFusionChainTest, DisabledPassLeavesTheChain) {
  OptimisedChain r = OptimiseChain(ChainGraph(TorchGeluTanh, ElementType::kFloat32), true, false,
                                   [](PassManager& p) { ASSERT_TRUE(p.Disable("elementwise_fusion").ok()); });
  ASSERT_TRUE(r.status.ok()) << r.status;
  EXPECT_EQ(CountOps(*r.graph, "Gelu"), 0);
  EXPECT_EQ(CountOps(*r.graph, "Tanh"), 1);
  EXPECT_TRUE(r.report.op_fusions.empty());
  EXPECT_TRUE(r.report.rejected.empty());
}

// The fused op runs at the model's opset, whatever it is (Gelu is opset 20,
// Swish 24): here opset 13.
TEST(OpFusionChainTest, FusedOpRunsAtAnOldOpset) {
  for (const ChainBuilder& chain : {ChainBuilder(BertGelu), ChainBuilder(Silu)}) {
    OptimisedChain fused = OptimiseChain(ChainGraph(chain, ElementType::kFloat32, 13), true);
    ASSERT_TRUE(fused.status.ok()) << fused.status;
    ASSERT_EQ(fused.report.op_fusions.size(), 1u);
    auto out = RunGraph(*fused.graph, DefaultKernelRegistry(), {ChainInput({1.0f, -2.0f}, ElementType::kFloat32)});
    ASSERT_TRUE(out.ok()) << out.status();
  }
}

struct MissCase {
  std::string name;
  ChainBuilder chain;
  ElementType type;
  std::string pattern;
  std::string reason;  // the rejection must contain it
  int64_t features = 8;
};

std::vector<MissCase> MissCases() {
  const ElementType f32 = ElementType::kFloat32;
  return {
      {"cubic_0_044",
       [](GraphBuilder& b, Value* x, ElementType t) { return GeluNew(b, x, t, 0.044); }, f32, "gelu_tanh",
       "constant 0.044 where the formula has 0.044715"},
      {"erf_divisor_1_4",
       [](GraphBuilder& b, Value* x, ElementType t) {
         Value* erf = b.Node("Erf", {b.Node("Div", {x, C(b, t, 1.4)})});
         return b.Node("Mul", {b.Node("Mul", {x, C(b, t, 0.5)}), b.Node("Add", {erf, C(b, t, 1.0)})});
       },
       f32, "gelu_erf", "where the formula has sqrt(2)"},
      {"tanh_also_read_outside",
       [](GraphBuilder& b, Value* x, ElementType t) {
         Value* y = GeluNew(b, x, t);
         Node* tanh = nullptr;
         for (Node* n : b.graph().nodes())
           if (n->op_type() == "Tanh") tanh = n;
         b.Output(b.Node("Neg", {tanh->output(0)}));
         return y;
       },
       f32, "gelu_tanh", "is also read by Neg"},
      {"float64",
       [](GraphBuilder& b, Value* x, ElementType t) { return TorchGeluErf(b, x, t); }, ElementType::kFloat64,
       "gelu_erf", "only float32 and float16 chains are fused"},
      {"half_as_two_elements",
       [](GraphBuilder& b, Value* x, ElementType t) {
         Value* erf = b.Node("Erf", {b.Node("Div", {x, C(b, t, 1.4142135623730951)})});
         Value* half = b.Constant("half_pair", Floats({2}, {0.5f, 0.5f}));
         return b.Node("Mul", {b.Node("Mul", {x, b.Node("Add", {erf, C(b, t, 1.0)})}), half});
       },
       f32, "gelu_erf", "holds 2 elements, not one number", 2},
      {"one_of_rank_4",
       [](GraphBuilder& b, Value* x, ElementType t) {
         Value* erf = b.Node("Erf", {b.Node("Div", {x, C(b, t, 1.4142135623730951)})});
         Value* one = b.Constant("one_rank4", Floats({1, 1, 1, 1}, {1.0f}));
         return b.Node("Mul", {b.Node("Mul", {x, b.Node("Add", {erf, one})}), C(b, t, 0.5)});
       },
       f32, "gelu_erf", "has rank 4, more than 'x' (3)"},
      {"swish_alpha_vector",
       [](GraphBuilder& b, Value* x, ElementType) {
         Value* alpha = b.Constant("alpha_vector", Floats({8}, std::vector<float>(8, 1.702f)));
         return b.Node("Mul", {x, b.Node("Sigmoid", {b.Node("Mul", {x, alpha})})});
       },
       f32, "swish", "alpha holds 8 elements"},
      {"swish_gate_read_outside",
       [](GraphBuilder& b, Value* x, ElementType t) {
         Value* s = b.Node("Sigmoid", {x});
         b.Output(s);
         return b.Node("Mul", {x, s});
       },
       f32, "swish", "is a graph output"},
  };
}

class OpFusionMissTest : public ::testing::TestWithParam<MissCase> {};

TEST_P(OpFusionMissTest, RejectedWithItsReason) {
  const MissCase& c = GetParam();
  OptimisedChain unfused = OptimiseChain(ChainGraph(c.chain, c.type, 17, c.features), false);
  OptimisedChain fused = OptimiseChain(ChainGraph(c.chain, c.type, 17, c.features), true);
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  EXPECT_TRUE(fused.report.op_fusions.empty());
  EXPECT_EQ(CountOps(*fused.graph, "Gelu") + CountOps(*fused.graph, "Swish"), 0);
  bool found = false;
  for (const RejectedCandidate& r : fused.report.rejected) {
    std::cout << "  rejected at " << r.at << " " << r.pattern << ": " << r.reason << "\n";
    found |= r.pattern == c.pattern && absl::StrContains(r.reason, c.reason);
  }
  EXPECT_TRUE(found) << "no " << c.pattern << " rejection says '" << c.reason << "'";
  EXPECT_EQ(fused.graph->nodes().size(), unfused.graph->nodes().size());
}

INSTANTIATE_TEST_SUITE_P(NearMisses, OpFusionMissTest, ::testing::ValuesIn(MissCases()),
                         [](const ::testing::TestParamInfo<MissCase>& info) { return info.param.name; });

// A Tanh that is no GELU (an activation of its own) is passed over in silence.
TEST(OpFusionMissTest, PlainTanhIsNoCandidate) {
  auto chain = [](GraphBuilder& b, Value* x, ElementType t) {
    return b.Node("Mul", {b.Node("Tanh", {x}), C(b, t, 2.0)});
  };
  OptimisedChain fused = OptimiseChain(ChainGraph(chain, ElementType::kFloat32), true);
  ASSERT_TRUE(fused.status.ok()) << fused.status;
  EXPECT_TRUE(fused.report.rejected.empty());
  EXPECT_TRUE(fused.report.op_fusions.empty());
}

}  // namespace
}  // namespace attune::testing
