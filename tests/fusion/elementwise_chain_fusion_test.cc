// elementwise_chain_fusion: trees of float32 element-wise ops that no other
// fusion describes run as one attune.ElementwiseChain and give the unfused
// graph's bits (NaN and infinities included, across many blocks and
// threads); where chains stop (an intermediate read elsewhere, a broadcast
// operand, another type); a bad program refused with one line; the export
// back to the ops.
#include <limits>
#include <string>

#include "tests/common/torch_export_graphs.h"
#include "tests/fusion/fuse_and_compare.h"
#include "tests/fusion/op_fusion_graphs.h"

namespace attune::testing {
namespace {

// x, y of [3, n, 7] with NaN and both infinities in x.
std::vector<Tensor> Inputs(int64_t n) {
  Tensor x = PseudoRandom({3, n, 7}, 1), y = PseudoRandom({3, n, 7}, 2);
  for (int64_t i = 0; i < x.num_elements(); ++i) x.data<float>()[i] *= 6.0f;
  x.data<float>()[3] = std::numeric_limits<float>::quiet_NaN();
  x.data<float>()[10] = std::numeric_limits<float>::infinity();
  x.data<float>()[x.num_elements() - 1] = -std::numeric_limits<float>::infinity();
  return {x, y};
}

using Chain = std::function<void(GraphBuilder&, Value* x, Value* y)>;

std::unique_ptr<Graph> ChainOf(const Chain& chain) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({3, "n", 7}));
  Value* y = b.Input("y", ElementType::kFloat32, Dims({3, "n", 7}));
  chain(b, x, y);
  return b.Build();
}

Value* C(GraphBuilder& b, double v) { return ScalarConstant(b, ElementType::kFloat32, v); }

struct ChainCase {
  std::string name;
  Chain chain;
  int steps;  // of the one chain it must become
};

std::vector<ChainCase> Cases() {
  return {
      // Mish written out: x · tanh(log(1 + exp(x))).
      {"mish", [](GraphBuilder& b, Value* x, Value*) {
         b.Output(b.Node("Mul", {x, b.Node("Tanh", {b.Node("Log", {b.Node("Add", {C(b, 1.0), b.Node("Exp", {x})})})})}));
       }, 5},
      // A scale, a shift by another tensor, a Relu.
      {"scale_shift_relu", [](GraphBuilder& b, Value* x, Value* y) {
         b.Output(b.Node("Relu", {b.Node("Add", {b.Node("Mul", {x, C(b, 0.5)}), y})}));
       }, 3},
      // Two subtrees meeting: tanh(x) / sqrt(|y| + 1) - sigmoid(-x) · erf(y).
      {"tree", [](GraphBuilder& b, Value* x, Value* y) {
         Value* left = b.Node("Div", {b.Node("Tanh", {x}), b.Node("Sqrt", {b.Node("Add", {b.Node("Abs", {y}), C(b, 1.0)})})});
         Value* right = b.Node("Mul", {b.Node("Sigmoid", {b.Node("Neg", {x})}), b.Node("Erf", {y})});
         b.Output(b.Node("Sub", {left, right}));
       }, 10},
      // x read by three steps, a reciprocal, a one-element operand of rank 3.
      {"shared_input", [](GraphBuilder& b, Value* x, Value*) {
         Value* c = b.Constant("c", Floats({1, 1, 1}, {2.5f}));
         b.Output(b.Node("Mul", {b.Node("Reciprocal", {b.Node("Add", {x, c})}), b.Node("Sub", {x, b.Node("Mul", {x, x})})}));
       }, 5},
  };
}

TEST(ElementwiseChainFusion, ChainsGiveTheOpsBits) {
  for (const ChainCase& c : Cases()) {
    FusionReport report;
    auto graph = ChainOf(c.chain);
    auto fused = FusedGraph(graph->Clone(), &report);
    EXPECT_EQ(CountOps(*fused, "ElementwiseChain"), 1) << c.name;
    EXPECT_EQ(fused->num_nodes(), 1) << c.name;
    ASSERT_EQ(report.op_fusions.size(), 1u) << c.name;
    EXPECT_EQ(report.op_fusions[0].pattern, "elementwise_chain");
    EXPECT_EQ(static_cast<int>(report.op_fusions[0].replaced.size()), c.steps) << c.name;
    for (int64_t n : {1, 20, 3000}) ExpectSameOutputs(*graph, *fused, Inputs(n));
  }
}

// An intermediate another node reads ends a chain there; a broadcast operand
// or a float16 op is not taken; a chain of one op stays as it is.
TEST(ElementwiseChainFusion, ChainsStopWhereTheirBitsOrShapesWouldNotHold) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({3, "n", 7}));
  Value* row = b.Input("row", ElementType::kFloat32, Dims({1, 7}));
  Value* h = b.Input("h", ElementType::kFloat16, Dims({3, "n", 7}));
  Value* shared = b.Node("Exp", {b.Node("Neg", {x})});                     // read twice: a chain of two
  b.Output(b.Node("Tanh", {shared}));                                      // one op: stays
  b.Output(b.Node("Mul", {b.Node("Sigmoid", {shared}), row}));              // broadcast: the Mul stays
  b.Output(b.Node("Abs", {b.Node("Neg", {h})}));                            // float16: stays
  auto graph = b.Build();
  FusionReport report;
  auto fused = FusedGraph(graph->Clone(), &report);
  EXPECT_EQ(CountOps(*fused, "ElementwiseChain"), 1);
  ASSERT_EQ(report.op_fusions.size(), 1u);
  EXPECT_EQ(report.op_fusions[0].attributes, "Neg Exp");
  EXPECT_EQ(CountOps(*fused, "Tanh"), 1);
  EXPECT_EQ(CountOps(*fused, "Sigmoid"), 1);
  EXPECT_EQ(CountOps(*fused, "Mul"), 1);
  EXPECT_EQ(CountOps(*fused, "Abs"), 1);
  Tensor half = *Tensor::Create(ElementType::kFloat16, {3, 4, 7});
  ExpectSameOutputs(*graph, *fused, {Inputs(4)[0], PseudoRandom({1, 7}, 3), half});
}

// A program whose operands do not read is refused at load, naming the node.
TEST(ElementwiseChainFusion, BadProgramsAreRefused) {
  auto load = [](std::vector<std::string> ops, std::vector<int64_t> operands, std::vector<int64_t> scalar) {
    GraphBuilder b(17);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({4}));
    b.Output(b.Node("ElementwiseChain", {x},
                    Attrs({{"ops", ops}, {"operands", operands}, {"scalar", scalar}}), "chain", "attune"));
    b.graph().SetOpset("attune", 1);
    return RunGraph(*b.Build(), DefaultKernelRegistry(), {PseudoRandom({4}, 1)}).status();
  };
  EXPECT_TRUE(load({"Neg", "Mul"}, {0, -1, 1, 0}, {0}).ok());
  absl::Status s = load({"Neg", "Mul"}, {1, -1, 0, 0}, {0});
  EXPECT_NE(s.message().find("ElementwiseChain 'chain': step 0 (Neg) has operands 1, -1"), std::string::npos) << s;
  s = load({"Pow"}, {0, 0}, {0});
  EXPECT_NE(s.message().find("step 0 op 'Pow' is not one a chain runs"), std::string::npos) << s;
  {
    GraphBuilder b(17);
    Value* x = b.Input("x", ElementType::kFloat32, Dims({4}));
    b.Output(b.Node("ElementwiseChain", {x}, Attrs({{"ops", std::vector<std::string>{"Neg"}}}), "chain", "attune"));
    b.graph().SetOpset("attune", 1);
    s = RunGraph(*b.Build(), DefaultKernelRegistry(), {PseudoRandom({4}, 1)}).status();
    EXPECT_NE(s.message().find("ElementwiseChain 'chain': missing attribute 'operands'"), std::string::npos) << s;
  }
  s = load({"Neg"}, {0, -1}, {1});
  EXPECT_NE(s.message().find("needs an input of the output's shape"), std::string::npos) << s;
}

TEST(ElementwiseChainFusion, ExportWritesTheOps) {
  auto graph = ChainOf(Cases()[2].chain);
  auto fused = FusedGraph(graph->Clone());
  auto reread = ExportedAndReread(*fused, "elementwise_chain_export.onnx");
  ASSERT_NE(reread, nullptr);
  EXPECT_EQ(reread->OpsetFor("attune"), 0);
  EXPECT_EQ(reread->num_nodes(), 10);  // the steps (the constant 1 is an initializer)
  ExpectSameOutputs(*graph, *reread, Inputs(5));
}

}  // namespace
}  // namespace attune::testing
