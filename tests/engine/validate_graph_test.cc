// The model validator: node arity against each op's schema, and attributes
// that index dims against the ranks known so far. Every refusal is one
// InvalidArgument line naming the node, the op and the attribute or count.
#include "core/validate/validate_graph.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/validate/op_arity.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

::testing::AssertionResult Refused(const absl::Status& s, const std::vector<std::string>& parts) {
  if (s.code() != absl::StatusCode::kInvalidArgument)
    return ::testing::AssertionFailure() << "expected InvalidArgument, got " << s;
  const std::string m(s.message());
  for (const std::string& p : parts)
    if (!absl::StrContains(m, p)) return ::testing::AssertionFailure() << "message lacks \"" << p << "\": " << m;
  if (m.find('\n') != std::string::npos) return ::testing::AssertionFailure() << "several lines: " << m;
  return ::testing::AssertionSuccess();
}

using Attr = std::pair<std::string, AttributeValue>;

// One node of `op` on x [2, 3, 4] (and `extra` inputs), checked alone.
absl::Status CheckOne(const std::string& op, Attributes attrs, int opset = 17, std::vector<Tensor> extra = {},
                      int outputs = 1) {
  GraphBuilder b(opset);
  std::vector<Value*> inputs{b.Input("x", ElementType::kFloat32, Dims({2, 3, 4}))};
  for (size_t i = 0; i < extra.size(); ++i) inputs.push_back(b.Constant(absl::StrCat("c", i), extra[i]));
  std::vector<Value*> outs = b.Nodes(op, inputs, outputs, std::move(attrs), "n");
  b.Output(outs[0]);
  return ValidateGraph(b.graph());
}

TEST(ValidateGraphTest, AxisAttributesOutOfRange) {
  EXPECT_TRUE(
      Refused(CheckOne("Softmax", Attrs({{"axis", int64_t{3}}})), {"Softmax 'n'", "attribute axis 3", "rank 3"}));
  EXPECT_TRUE(Refused(CheckOne("LogSoftmax", Attrs({{"axis", int64_t{-4}}})), {"LogSoftmax 'n'", "axis -4"}));
  EXPECT_TRUE(Refused(CheckOne("Gather", Attrs({{"axis", int64_t{5}}}), 17, {Int64s({0})}), {"Gather 'n'", "axis 5"}));
  EXPECT_TRUE(Refused(CheckOne("Split", Attrs({{"axis", int64_t{3}}}), 17, {}, 2), {"Split 'n'", "axis 3"}));
  EXPECT_TRUE(Refused(CheckOne("Flatten", Attrs({{"axis", int64_t{4}}})), {"Flatten 'n'", "axis 4"}));
  EXPECT_TRUE(Refused(CheckOne("ArgMax", Attrs({{"axis", int64_t{-5}}})), {"ArgMax 'n'", "axis -5"}));
  EXPECT_TRUE(Refused(CheckOne("LayerNormalization", Attrs({{"axis", int64_t{3}}}), 17, {Floats({4}, {1, 1, 1, 1})}),
                      {"LayerNormalization 'n'", "axis 3"}));
  EXPECT_TRUE(Refused(CheckOne("ReduceSum", {}, 17, {Int64s({0, 7})}), {"ReduceSum 'n'", "axes 7"}));
  EXPECT_TRUE(Refused(CheckOne("ReduceMean", Attrs({{"axes", std::vector<int64_t>{1, -2}}}), 13),
                      {"ReduceMean 'n'", "names axis 1 twice"}));
  EXPECT_TRUE(Refused(CheckOne("Unsqueeze", {}, 17, {Int64s({4})}), {"Unsqueeze 'n'", "axes 4", "rank 4"}));
  EXPECT_TRUE(Refused(CheckOne("Unsqueeze", {}, 17, {Int64s({0, 0})}), {"Unsqueeze 'n'", "twice"}));
  EXPECT_TRUE(Refused(CheckOne("Squeeze", Attrs({{"axes", std::vector<int64_t>{3}}}), 11), {"Squeeze 'n'", "axes 3"}));
}

TEST(ValidateGraphTest, AxisAttributesInRange) {
  EXPECT_TRUE(CheckOne("Softmax", Attrs({{"axis", int64_t{-3}}})).ok());
  EXPECT_TRUE(CheckOne("Softmax", {}, 11).ok());  // default axis 1 before opset 13
  EXPECT_TRUE(CheckOne("Flatten", Attrs({{"axis", int64_t{3}}})).ok());  // Flatten's axis may equal the rank
  EXPECT_TRUE(CheckOne("Unsqueeze", {}, 17, {Int64s({3, -1})}).ok());  // output rank 5
  EXPECT_TRUE(CheckOne("ReduceSum", {}, 17, {Int64s({-1, 0})}).ok());
  EXPECT_TRUE(CheckOne("Split", Attrs({{"axis", int64_t{-1}}}), 17, {}, 2).ok());
}

TEST(ValidateGraphTest, TransposePerm) {
  const auto perm = [](std::vector<int64_t> p) { return Attrs({{"perm", std::move(p)}}); };
  EXPECT_TRUE(CheckOne("Transpose", perm({2, 0, 1})).ok());
  EXPECT_TRUE(Refused(CheckOne("Transpose", perm({127, 7, 1})), {"Transpose 'n'", "attribute perm [127, 7, 1]"}));
  EXPECT_TRUE(Refused(CheckOne("Transpose", perm({0, 0, 1})), {"not a permutation"}));
  EXPECT_TRUE(Refused(CheckOne("Transpose", perm({1, 0})), {"has 2 entries for input 'x' of rank 3"}));
  EXPECT_TRUE(Refused(CheckOne("Transpose", Attrs({{"perm", int64_t{1}}})), {"Transpose 'n'", "perm"}));

  // Unknown rank: only what needs no rank is checked.
  GraphBuilder b;
  Value* x = b.Input("x", ElementType::kFloat32, Dims({2, 3}));
  Value* r = b.Node("Reshape", {x, b.Input("shape", ElementType::kInt64, Dims({3}))});
  b.Node("Transpose", {r}, perm({2, 0, 1}), "ok");
  EXPECT_TRUE(ValidateGraph(b.graph()).ok());
  b.Node("Transpose", {r}, perm({0, 1, 5}), "bad");
  EXPECT_TRUE(Refused(ValidateGraph(b.graph()), {"Transpose 'bad'", "not a permutation of 0..2"}));
}

TEST(ValidateGraphTest, ConcatRanks) {
  GraphBuilder b;
  Value* x = b.Input("x", ElementType::kFloat32, Dims({2, 3}));
  Value* y = b.Input("y", ElementType::kFloat32, Dims({2, 3, 1}));
  b.Node("Concat", {x, x}, Attrs({{"axis", int64_t{1}}}), "good");
  EXPECT_TRUE(ValidateGraph(b.graph()).ok());
  b.Node("Concat", {x, y}, Attrs({{"axis", int64_t{0}}}), "ranks");
  EXPECT_TRUE(Refused(ValidateGraph(b.graph()), {"Concat 'ranks'", "different ranks"}));

  GraphBuilder c;
  Value* z = c.Input("z", ElementType::kFloat32, Dims({2, 3}));
  c.Node("Concat", {z, z}, Attrs({{"axis", int64_t{2}}}), "axis");
  EXPECT_TRUE(Refused(ValidateGraph(c.graph()), {"Concat 'axis'", "attribute axis 2"}));
  GraphBuilder d;
  Value* w = d.Input("w", ElementType::kFloat32, Dims({2}));
  d.Node("Concat", {w, w}, {}, "missing");
  EXPECT_TRUE(Refused(ValidateGraph(d.graph()), {"Concat 'missing'", "attribute axis is missing"}));
}

TEST(ValidateGraphTest, Arity) {
  EXPECT_TRUE(Refused(CheckOne("Gather", {}, 17, {Int64s({0})}, 3),
                      {"Gather 'n'", "has 3 outputs; the op gives 1 output at opset 17"}));
  EXPECT_TRUE(Refused(CheckOne("Relu", {}, 17, {Int64s({0})}), {"Relu 'n'", "has 2 inputs; the op takes 1 input"}));
  EXPECT_TRUE(Refused(CheckOne("Slice", {}, 17), {"Slice 'n'", "has 1 input; the op takes 3 to 5 inputs"}));
  EXPECT_TRUE(CheckOne("Slice", {}, 9).ok());  // attributes before opset 10
  EXPECT_TRUE(CheckOne("Dropout", {}, 17, {}, 2).ok());

  GraphBuilder b;
  b.Nodes("Constant", {}, 2, Attrs({{"value", Floats({1}, {1})}}), "two_outputs");
  EXPECT_TRUE(Refused(ValidateGraph(b.graph()), {"Constant 'two_outputs'", "has 2 outputs"}));
  GraphBuilder c;
  Value* y = c.Input("y", ElementType::kFloat32, Dims({2}));
  c.Node("Where", {nullptr, y, y}, {}, "omitted");
  EXPECT_TRUE(Refused(ValidateGraph(c.graph()), {"Where 'omitted'", "input 0 is required but omitted"}));
  GraphBuilder d;
  Value* z = d.Input("z", ElementType::kFloat32, Dims({2}));
  d.Node("Concat", {z, nullptr}, Attrs({{"axis", int64_t{0}}}), "variadic");
  EXPECT_TRUE(Refused(ValidateGraph(d.graph()), {"Concat 'variadic'", "input 1 of a variadic list is omitted"}));
}

// The arity table cannot fall behind the kernels: every op Attune runs has an
// entry at every opset its kernels start at.
TEST(ValidateGraphTest, EveryKernelHasAnArity) {
  for (const KernelRegistry::Entry* e : DefaultKernelRegistry().Entries()) {
    EXPECT_NE(FindOpArity(e->domain, e->op_type, e->since_version), nullptr)
        << e->domain << "::" << e->op_type << " opset " << e->since_version;
  }
}

}  // namespace
}  // namespace attune::testing
