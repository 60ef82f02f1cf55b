// Where a KV cache may be appended in place (engine/exec/cache_sites.h): a
// past read only by a fused attention node (and shape-only ops), a present
// that node produces (directly or through Identity) and nobody else reads.
// Everything else is refused with the reason.
#include "engine/exec/cache_sites.h"

#include <string>

#include "core/schema/multi_head_attention.h"
#include "gtest/gtest.h"

namespace attune {
namespace {

// q, k, v, past_key, past_value in; one fused attention node writing y and
// its present key and value.
struct AttentionGraph {
  Graph graph;
  Value* past_key;
  Value* past_value;
  Value* new_key;
  Value* present_key;  // the node's output
  Value* present_value;
  Node* mha;

  AttentionGraph() {
    auto in = [&](const char* name) {
      Value* v = graph.AddValue(name, ElementType::kFloat32);
      graph.AddInput(v);
      return v;
    };
    Value* q = in("q");
    new_key = in("k");
    Value* v = in("v");
    past_key = in("past_key");
    past_value = in("past_value");
    Value* y = graph.AddValue("y", ElementType::kFloat32);
    present_key = graph.AddValue("mha_present_key", ElementType::kFloat32);
    present_value = graph.AddValue("mha_present_value", ElementType::kFloat32);
    mha = graph.AddNode(mha::kOpType, mha::kDomain, "mha", {q, new_key, v, nullptr, past_key, past_value},
                        {y, present_key, present_value});
    graph.AddOutput(y);
  }
  Value* Identity(Value* of, const char* name) {
    Value* out = graph.AddValue(name, ElementType::kFloat32);
    graph.AddNode("Identity", "", std::string("identity_") + name, {of}, {out});
    return out;
  }
};

TEST(CacheSitesTest, AFusedPastAndItsPresentThroughIdentity) {
  AttentionGraph g;
  Value* present = g.Identity(g.present_key, "present_key");
  g.graph.AddOutput(present);
  Value* shape = g.graph.AddValue("past_shape", ElementType::kInt64);
  g.graph.AddNode("Shape", "", "shape", {g.past_key}, {shape});  // shape-only readers are fine
  g.graph.AddOutput(shape);
  const CacheSite past = FindPastSite(*g.past_key);
  EXPECT_EQ(past.node, g.mha) << past.why_not;
  EXPECT_EQ(past.port, mha::kInputPastKey);
  const CacheSite out = FindPresentSite(*present);
  EXPECT_EQ(out.node, g.mha) << out.why_not;
  EXPECT_EQ(out.port, mha::kOutputPresentKey);
  g.graph.AddOutput(g.present_value);  // directly, without an Identity
  EXPECT_EQ(FindPresentSite(*g.present_value).port, mha::kOutputPresentValue);
}

TEST(CacheSitesTest, APastReadByAnotherNodeIsRefused) {
  AttentionGraph g;
  Value* cat = g.graph.AddValue("cat", ElementType::kFloat32);
  g.graph.AddNode("Concat", "", "concat", {g.past_key, g.new_key}, {cat});
  g.graph.AddOutput(cat);
  const CacheSite past = FindPastSite(*g.past_key);
  EXPECT_EQ(past.node, nullptr);
  EXPECT_NE(past.why_not.find("read by node 'concat' (Concat)"), std::string::npos) << past.why_not;
}

TEST(CacheSitesTest, APresentComputedByAPlainConcatIsRefused) {
  AttentionGraph g;
  Value* cat = g.graph.AddValue("present_key", ElementType::kFloat32);
  g.graph.AddNode("Concat", "", "concat", {g.new_key, g.new_key}, {cat});
  g.graph.AddOutput(cat);
  const CacheSite out = FindPresentSite(*cat);
  EXPECT_EQ(out.node, nullptr);
  EXPECT_NE(out.why_not.find("computed by node 'concat' (Concat)"), std::string::npos) << out.why_not;
}

TEST(CacheSitesTest, APresentAlsoReadInsideTheGraphIsRefused) {
  AttentionGraph g;
  Value* present = g.Identity(g.present_key, "present_key");
  g.graph.AddOutput(present);
  Value* other = g.graph.AddValue("other", ElementType::kFloat32);
  g.graph.AddNode("Relu", "", "relu", {g.present_key}, {other});
  g.graph.AddOutput(other);
  EXPECT_EQ(FindPresentSite(*present).node, nullptr);
}

TEST(CacheSitesTest, AnUnreadOrNonFloatPastIsRefused) {
  AttentionGraph g;
  Value* unread = g.graph.AddValue("unread", ElementType::kFloat32);
  g.graph.AddInput(unread);
  EXPECT_NE(FindPastSite(*unread).why_not.find("no fused attention"), std::string::npos);
  Value* half = g.graph.AddValue("half", ElementType::kFloat16);
  g.graph.AddInput(half);
  EXPECT_NE(FindPastSite(*half).why_not.find("not float32"), std::string::npos);
}

}  // namespace
}  // namespace attune
