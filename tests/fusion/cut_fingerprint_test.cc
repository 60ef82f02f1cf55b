// The fingerprint of a cut subgraph, which lets one mask proof serve every
// layer of a decoder: equal for cuts that compute the same thing under other
// names and symbols, different as soon as a constant, an attribute, the
// wiring or a shape differs.
#include <string>
#include <vector>

#include "engine/rewrite/shape_subgraph.h"
#include "gtest/gtest.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {
namespace {

struct Built {
  std::unique_ptr<Graph> graph;
  std::vector<const Value*> roots;
};

// One padding-like mask per entry of `fills`: (1 - Cast(m)) * fill, over an input
// whose key dim is `keys` (a symbol), each with its own constants.
Built Masks(const std::vector<float>& fills, const std::string& keys, int64_t axis = 1) {
  GraphBuilder b(17);
  Value* m = b.Input("m", ElementType::kInt64, Dims({"batch", keys.c_str()}));
  Built out;
  for (size_t i = 0; i < fills.size(); ++i) {
    const std::string n = std::to_string(i);
    Value* f = b.Node("Cast", {m}, Attrs({{"to", int64_t{1}}}));
    Value* hide = b.Node("Sub", {b.Constant("one" + n, ScalarOf<float>(1.0f)), f});
    Value* u = b.Node("Unsqueeze", {hide, b.Constant("axes" + n, Int64s({axis}))});
    Value* y = b.Node("Mul", {u, b.Constant("fill" + n, ScalarOf<float>(fills[i]))});
    b.Output(y);
    out.roots.push_back(y);
  }
  out.graph = b.Build();
  return out;
}

std::string FingerprintOf(const Graph& g, const Value* root) {
  auto cut = ShapeSubgraph::Cut(g, root, CutValues{{}, true});
  EXPECT_TRUE(cut.ok()) << cut.status();
  std::vector<std::string> symbols;
  return cut.ok() ? cut->Fingerprint(symbols) : "";
}

TEST(CutFingerprintTest, LayersThatComputeTheSameShareIt) {
  Built two = Masks({-3.0f, -3.0f}, "keys");
  EXPECT_EQ(FingerprintOf(*two.graph, two.roots[0]), FingerprintOf(*two.graph, two.roots[1]));
  // Another graph, other symbol names: the same text.
  Built other = Masks({-3.0f}, "total_seq");
  EXPECT_EQ(FingerprintOf(*two.graph, two.roots[0]), FingerprintOf(*other.graph, other.roots[0]));
}

TEST(CutFingerprintTest, AConstantAnAttributeOrAShapeChangesIt) {
  Built fills = Masks({-3.0f, -4.0f}, "keys");
  EXPECT_NE(FingerprintOf(*fills.graph, fills.roots[0]), FingerprintOf(*fills.graph, fills.roots[1]));
  Built axis = Masks({-3.0f}, "keys", /*axis=*/0);
  EXPECT_NE(FingerprintOf(*fills.graph, fills.roots[0]), FingerprintOf(*axis.graph, axis.roots[0]));
  Built known = Masks({-3.0f}, "batch");  // keys and batch the same symbol: another shape
  EXPECT_NE(FingerprintOf(*fills.graph, fills.roots[0]), FingerprintOf(*known.graph, known.roots[0]));
}

TEST(CutFingerprintTest, RenamedDimsKeepNumbers) {
  auto renamed = [](const char* text) {
    std::vector<std::string> symbols;
    return RenamedDim(Dim::Symbol(text), symbols);
  };
  EXPECT_EQ(renamed("past+seq"), renamed("p+s"));
  EXPECT_EQ(renamed("batch*(min(64,seq))"), renamed("b*(min(64,t))"));
  EXPECT_NE(renamed("12*seq"), renamed("3*seq"));
  EXPECT_NE(renamed("min(64,seq)"), renamed("min(32,seq)"));
}

}  // namespace
}  // namespace attune::testing
