// RewriteAttentionForOnnx on hand-built graphs: when attune.MultiHeadAttention
// may become ONNX Attention-23, and when it must stay.
#include "core/ir/graph.h"
#include "core/schema/multi_head_attention.h"
#include "gtest/gtest.h"
#include "importer/attention_export.h"

namespace attune {
namespace {

SymbolicShape S(std::initializer_list<Dim> dims) { return SymbolicShape(dims); }
Dim N(int64_t v) { return Dim::Known(v); }
Dim Sym(const char* s) { return Dim::Symbol(s); }

struct Built {
  std::unique_ptr<Graph> graph;
  Node* mha = nullptr;
};

// y = MultiHeadAttention(q, k, v[, mask]) on 3-D (B, T, 64) inputs, 4 heads.
Built MhaGraph(int opset, Attributes attrs, SymbolicShape q_shape, SymbolicShape k_shape,
               std::optional<SymbolicShape> mask_shape = std::nullopt, ElementType mask_type = ElementType::kBool) {
  Built b;
  b.graph = std::make_unique<Graph>();
  Graph& g = *b.graph;
  g.SetOpset("", opset);
  g.SetOpset("attune", 1);
  Value* q = g.AddValue("q", ElementType::kFloat32, q_shape);
  Value* k = g.AddValue("k", ElementType::kFloat32, k_shape);
  Value* v = g.AddValue("v", ElementType::kFloat32, k_shape);
  for (Value* in : {q, k, v}) g.AddInput(in);
  std::vector<Value*> inputs = {q, k, v};
  if (mask_shape) {
    Value* mask = g.AddValue("mask", mask_type, *mask_shape);
    g.AddInput(mask);
    inputs.push_back(mask);
  }
  Value* y = g.AddValue("y", ElementType::kFloat32, q_shape);
  b.mha = g.AddNode(mha::kOpType, mha::kDomain, "attn", inputs, {y}, std::move(attrs));
  g.AddOutput(y);
  return b;
}

Attributes Causal(int64_t heads = 4) {
  Attributes a;
  a.Set(mha::kNumHeads, heads);
  a.Set(mha::kKvNumHeads, heads);
  a.Set(mha::kCausal, int64_t{1});
  a.Set(mha::kScale, 0.25f);
  return a;
}

const Node* Only(const Graph& g) { return g.nodes().size() == 1 ? g.nodes()[0] : nullptr; }

TEST(AttentionExport, CausalSelfAttentionBecomesOnnxAttention) {
  Built b = MhaGraph(17, Causal(), S({Sym("batch"), Sym("seq"), N(64)}), S({Sym("batch"), Sym("seq"), N(64)}));
  AttentionExportSummary s;
  auto out = RewriteAttentionForOnnx(*b.graph, &s);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(s.attention_ops, 1);
  EXPECT_EQ(s.default_opset_before, 17);
  EXPECT_EQ(s.default_opset_after, 23);
  const Node* n = Only(**out);
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->op_type(), "Attention");
  EXPECT_EQ(n->domain(), "");
  EXPECT_EQ(n->name(), "attn");
  EXPECT_EQ(n->attributes().GetInt("is_causal").value_or(0), 1);
  EXPECT_EQ(n->attributes().GetInt("q_num_heads").value_or(0), 4);
  EXPECT_EQ(n->attributes().GetInt("kv_num_heads").value_or(0), 4);
  EXPECT_FLOAT_EQ(n->attributes().GetFloat("scale").value_or(0), 0.25f);
  EXPECT_FALSE(n->attributes().Has("causal"));
  EXPECT_FALSE(n->attributes().Has("num_heads"));
  EXPECT_EQ((*out)->OpsetFor(""), 23);
  EXPECT_EQ((*out)->OpsetFor("attune"), 0) << "no attune node is left";
  EXPECT_EQ((*out)->outputs()[0]->name(), "y");
  // The input graph is untouched.
  EXPECT_EQ(b.mha->op_type(), "MultiHeadAttention");
  EXPECT_EQ(b.graph->OpsetFor(""), 17);
}

TEST(AttentionExport, WindowStays) {
  Attributes a = Causal();
  a.Set(mha::kWindow, int64_t{8});
  Built b = MhaGraph(17, a, S({N(1), Sym("seq"), N(64)}), S({N(1), Sym("seq"), N(64)}));
  AttentionExportSummary s;
  auto out = RewriteAttentionForOnnx(*b.graph, &s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(s.attention_ops, 0);
  EXPECT_EQ(s.default_opset_after, 17);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].reason.find("window"), std::string::npos);
  EXPECT_EQ(Only(**out)->op_type(), "MultiHeadAttention");
  EXPECT_EQ((*out)->OpsetFor("attune"), 1);
}

TEST(AttentionExport, CausalWithMoreKeysThanQueriesStays) {
  // Bottom-right and top-left causal alignment differ when T_k != T_q.
  Built b = MhaGraph(17, Causal(), S({N(1), Sym("seq"), N(64)}), S({N(1), Sym("total"), N(64)}));
  AttentionExportSummary s;
  ASSERT_TRUE(RewriteAttentionForOnnx(*b.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 0);
  EXPECT_NE(s.notes[0].reason.find("top-left"), std::string::npos) << s.notes[0].reason;
  // Without causal the alignment does not matter.
  Attributes plain = Causal();
  plain.Erase("causal");
  Built c = MhaGraph(17, plain, S({N(1), Sym("seq"), N(64)}), S({N(1), Sym("total"), N(64)}));
  ASSERT_TRUE(RewriteAttentionForOnnx(*c.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 1);
}

TEST(AttentionExport, MaskMustCoverEveryKey) {
  Attributes plain = Causal();
  plain.Erase("causal");
  const SymbolicShape qk = S({N(2), Sym("seq"), N(64)});
  AttentionExportSummary s;
  Built full = MhaGraph(17, plain, qk, qk, S({N(2), N(1), Sym("seq"), Sym("seq")}));
  ASSERT_TRUE(RewriteAttentionForOnnx(*full.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 1);
  // A key axis of 1 broadcasts here but would be padded with -inf by ONNX.
  Built narrow = MhaGraph(17, plain, qk, qk, S({N(2), N(1), Sym("seq"), N(1)}));
  ASSERT_TRUE(RewriteAttentionForOnnx(*narrow.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 0);
  EXPECT_NE(s.notes[0].reason.find("mask"), std::string::npos);
  // An int mask is neither bool nor the float type of Q.
  Built int_mask = MhaGraph(17, plain, qk, qk, S({N(2), N(1), Sym("seq"), Sym("seq")}), ElementType::kInt64);
  ASSERT_TRUE(RewriteAttentionForOnnx(*int_mask.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 0);
}

TEST(AttentionExport, CausalWithoutMaskInputsIsWrittenWhateverItsNonFinitePolicy) {
  // A causal block has no row without a visible key: masked_rows and
  // hidden_nonfinite only say what non-finite scores give, which the note states.
  const SymbolicShape qk = S({Sym("batch"), Sym("seq"), N(64)});
  Attributes where = Causal();
  where.Set(mha::kHiddenNonFinite, std::vector<int64_t>{0, 0});
  where.Set(mha::kMaskedRows, std::string("uniform"));
  Built b = MhaGraph(17, where, qk, qk);
  AttentionExportSummary s;
  auto out = RewriteAttentionForOnnx(*b.graph, &s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(s.attention_ops, 1);
  ASSERT_EQ(s.notes.size(), 1u);
  EXPECT_NE(s.notes[0].nonfinite_difference.find("NaN or infinite score at a key hidden"), std::string::npos)
      << s.notes[0].nonfinite_difference;
  EXPECT_NE(s.notes[0].nonfinite_difference.find("mean of V"), std::string::npos);
  EXPECT_FALSE(Only(**out)->attributes().Has(mha::kMaskedRows));
  // An additive causal mask (masked_rows nan, hidden scores kept) is ONNX Attention exactly.
  Attributes added = Causal();
  added.Set(mha::kMaskedRows, std::string("nan"));
  Built c = MhaGraph(17, added, qk, qk);
  ASSERT_TRUE(RewriteAttentionForOnnx(*c.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 1);
  EXPECT_EQ(s.notes[0].nonfinite_difference, "");
  // With a mask input a row can have every key hidden: the policies differ on finite scores.
  Attributes masked = where;
  masked.Erase(mha::kCausal);
  Built d = MhaGraph(17, masked, qk, qk, S({Sym("batch"), N(1), Sym("seq"), Sym("seq")}));
  ASSERT_TRUE(RewriteAttentionForOnnx(*d.graph, &s).ok());
  EXPECT_EQ(s.attention_ops, 0);
  EXPECT_NE(s.notes[0].reason.find("masked_rows"), std::string::npos) << s.notes[0].reason;
}

TEST(AttentionExport, OpThatChangedMeaningBlocksTheOpsetRaise) {
  Built b = MhaGraph(13, Causal(), S({N(1), Sym("seq"), N(64)}), S({N(1), Sym("seq"), N(64)}));
  Graph& g = *b.graph;
  // ReduceMean with an axes attribute is invalid from opset 18 (axes became an input).
  Value* m = g.AddValue("m", ElementType::kFloat32);
  Attributes axes;
  axes.Set("axes", std::vector<int64_t>{-1});
  g.AddNode("ReduceMean", "", "mean", {g.outputs()[0]}, {m}, axes);
  g.AddOutput(m);
  AttentionExportSummary s;
  auto out = RewriteAttentionForOnnx(g, &s);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(s.attention_ops, 0);
  EXPECT_EQ(s.default_opset_after, 13);
  EXPECT_NE(s.opset_blocker.find("ReduceMean-18"), std::string::npos) << s.opset_blocker;
  EXPECT_NE(s.notes[0].reason.find("cannot be raised to 23"), std::string::npos) << s.notes[0].reason;
  EXPECT_EQ((*out)->OpsetFor(""), 13);
}

TEST(AttentionExport, OpsetRaiseProblemTable) {
  Graph g;
  Value* x = g.AddValue("x", ElementType::kFloat32);
  auto node = [&](const std::string& op, Attributes a, std::vector<Value*> extra = {}) {
    std::vector<Value*> ins = {x};
    ins.insert(ins.end(), extra.begin(), extra.end());
    return g.AddNode(op, "", g.UniqueName(op), ins, {g.AddValue(g.UniqueName("o"))}, std::move(a));
  };
  Attributes none;
  Attributes axes;
  axes.Set("axes", std::vector<int64_t>{1});
  EXPECT_NE(OpsetRaiseProblem(*node("Softmax", none), 11, 23), "");
  EXPECT_EQ(OpsetRaiseProblem(*node("Softmax", none), 13, 23), "");
  EXPECT_NE(OpsetRaiseProblem(*node("Unsqueeze", axes), 11, 23), "");
  EXPECT_EQ(OpsetRaiseProblem(*node("Unsqueeze", none, {x}), 13, 23), "");
  EXPECT_NE(OpsetRaiseProblem(*node("ReduceMax", axes), 17, 23), "");
  EXPECT_EQ(OpsetRaiseProblem(*node("ReduceMax", axes), 18, 23), "");
  EXPECT_EQ(OpsetRaiseProblem(*node("ReduceMax", none), 17, 23), "");
  EXPECT_NE(OpsetRaiseProblem(*node("Split", none), 17, 23), "");
  EXPECT_EQ(OpsetRaiseProblem(*node("Split", none, {x}), 17, 23), "");
  EXPECT_NE(OpsetRaiseProblem(*node("GroupNormalization", none), 18, 23), "");
  for (const char* op : {"MatMul", "Add", "Reshape", "Transpose", "LayerNormalization", "Where", "Cast", "Gather"})
    EXPECT_EQ(OpsetRaiseProblem(*node(op, none), 13, 23), "") << op;
}

}  // namespace
}  // namespace attune
