// Shape inference: element types and symbolic shapes per op family.
#include <gtest/gtest.h>

#include "core/schema/multi_head_attention.h"
#include "engine/passes/passes.h"
#include "tests/common/graph_builder.h"
#include "tests/passes/canon_test_util.h"

namespace attune::testing {
namespace {

constexpr ElementType kF32 = ElementType::kFloat32;
constexpr ElementType kI64 = ElementType::kInt64;

// Runs shape inference and checks that a second run changes nothing.
void Infer(Graph& graph) {
  auto pass = MakeShapeInferencePass();
  auto first = RunPass(*pass, graph);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = RunPass(*pass, graph);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_FALSE(*second) << "shape inference is not idempotent";
}

TEST(CanonShapeInference, BroadcastingWithSymbols) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 1, "seq", 64}));
  Value* y = b.Input("y", kF32, Dims({"heads", 1, 64}));
  Value* z = b.Input("z", kF32, Dims({"other", 64}));
  Value* sum = b.Node("Add", {x, y});
  Value* cmp = b.Node("Less", {x, y});
  Value* odd = b.Node("Mul", {x, z});  // seq vs other: either may be 1
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(sum), "[batch, heads, seq, 64]");
  EXPECT_EQ(sum->type(), kF32);
  EXPECT_EQ(cmp->type(), ElementType::kBool);
  EXPECT_EQ(ShapeOf(odd), "[batch, 1, ?, 64]");
}

TEST(CanonShapeInference, KnownNumberWinsOverSymbolInBroadcast) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"n", 8}));
  Value* y = b.Input("y", kF32, Dims({5, 8}));
  Value* sum = b.Node("Add", {x, y});
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(sum), "[5, 8]");  // n must be 1 or 5 in a valid run
}

TEST(CanonShapeInference, MatMulGemmTranspose) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({"batch", 12, "seq", 64}));
  Value* k = b.Input("k", kF32, Dims({"batch", 12, "seq", 64}));
  Value* kt = b.Node("Transpose", {k}, Attrs({{"perm", std::vector<int64_t>{0, 1, 3, 2}}}));
  Value* scores = b.Node("MatMul", {q, kt});
  Value* a = b.Input("a", kF32, Dims({"m", 32}));
  Value* w = b.Constant("w", Floats({16, 32}, std::vector<float>(16 * 32, 0.f)));
  Value* gemm = b.Node("Gemm", {a, w}, Attrs({{"transB", int64_t{1}}}));
  Value* v = b.Input("v", kF32, Dims({64}));
  Value* mv = b.Node("MatMul", {q, v});
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(kt), "[batch, 12, 64, seq]");
  EXPECT_EQ(ShapeOf(scores), "[batch, 12, seq, seq]");
  EXPECT_EQ(ShapeOf(gemm), "[m, 16]");
  EXPECT_EQ(ShapeOf(mv), "[batch, 12, seq]");
}

// torch's split heads: Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), Unsqueeze(Gather(Shape(x), 1)), [12], [64])).
TEST(CanonShapeInference, ReshapeWithSymbolicTargetFromShapeChain) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 768}));
  Value* shape = b.Node("Shape", {x});
  Value* d0 = b.Node("Gather", {shape, b.Constant("i0", ScalarOf<int64_t>(0))}, Attrs({{"axis", int64_t{0}}}));
  Value* d1 = b.Node("Gather", {shape, b.Constant("i1", ScalarOf<int64_t>(1))}, Attrs({{"axis", int64_t{0}}}));
  Value* u0 = b.Node("Unsqueeze", {d0, b.Constant("ax0", Int64s({0}))});
  Value* u1 = b.Node("Unsqueeze", {d1, b.Constant("ax1", Int64s({0}))});
  Value* target = b.Node("Concat", {u0, u1, b.Constant("h", Int64s({12})), b.Constant("d", Int64s({64}))},
                         Attrs({{"axis", int64_t{0}}}));
  Value* split = b.Node("Reshape", {x, target});
  // And back with -1: [batch, seq, 12, 64] -> [0, 0, -1].
  Value* merged = b.Node("Reshape", {split, b.Constant("m", Int64s({0, 0, -1}))});
  // -1 solved symbolically: [batch, seq, 768] -> [-1, 64].
  Value* rows = b.Node("Reshape", {x, b.Constant("r", Int64s({-1, 64}))});
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(shape), "[3]");
  EXPECT_EQ(shape->type(), kI64);
  EXPECT_EQ(ShapeOf(d0), "[]");
  EXPECT_EQ(ShapeOf(target), "[4]");
  EXPECT_EQ(ShapeOf(split), "[batch, seq, 12, 64]");
  EXPECT_EQ(ShapeOf(merged), "[batch, seq, 768]");
  EXPECT_EQ(ShapeOf(rows), "[12*batch*seq, 64]");
}

TEST(CanonShapeInference, ReshapeMinusOneThatCannotBeSolvedGetsAFreshSymbol) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"n", 10}));
  Value* r = b.Node("Reshape", {x, b.Constant("t", Int64s({-1, 4}))}, {}, "r");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(r), "[unk__r_out_0, 4]");
}

// The dims off a Concat's axis are equal whenever it succeeds, so the most
// telling name is kept: BLOOM's past (batch_x_heads, D, past) joined to its
// merged new keys (4*batch, D, seq) gives presents of 4*batch rows, the
// batch the rest of the graph is proven in.
TEST(CanonShapeInference, ConcatKeepsTheMostTellingDimOffTheAxis) {
  GraphBuilder b;
  Value* past = b.Input("past", kF32, Dims({"batch_x_heads", 16, "past"}));
  Value* k4 = b.Input("k", kF32, Dims({"batch", 4, 16, "seq"}));
  Value* seq = b.Node("Gather", {b.Node("Shape", {k4}), b.Constant("at", Int64s({3}))}, Attrs({{"axis", int64_t{0}}}));
  Value* to = b.Node("Concat", {b.Constant("lead", Int64s({-1, 16})), seq}, Attrs({{"axis", int64_t{0}}}));
  Value* merged = b.Node("Reshape", {k4, to});
  Value* present = b.Node("Concat", {past, merged}, Attrs({{"axis", int64_t{2}}}));
  Value* other = b.Input("other", kF32, Dims({"rows", 16, "seq"}));
  Value* symbols = b.Node("Concat", {past, other}, Attrs({{"axis", int64_t{2}}}));
  Value* fixed = b.Input("fixed", kF32, Dims({8, 16, "seq"}));
  Value* number = b.Node("Concat", {merged, fixed, past}, Attrs({{"axis", int64_t{-1}}}));
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(merged), "[4*batch, 16, seq]");
  EXPECT_EQ(ShapeOf(present), "[4*batch, 16, past+seq]");
  EXPECT_EQ(ShapeOf(symbols), "[batch_x_heads, 16, past+seq]");  // two names alike: the first
  EXPECT_EQ(ShapeOf(number), "[8, 16, past+2*seq]");
}

TEST(CanonShapeInference, ConcatSplitSliceGather) {
  GraphBuilder b;
  Value* past = b.Input("past", kF32, Dims({"batch", 4, "past", 16}));
  Value* k = b.Input("k", kF32, Dims({"batch", 4, "seq", 16}));
  Value* cat = b.Node("Concat", {past, k}, Attrs({{"axis", int64_t{2}}}));
  Value* qkv = b.Input("qkv", kF32, Dims({"batch", "seq", 192}));
  auto parts = b.Nodes("Split", {qkv, b.Constant("sizes", Int64s({64, 64, 64}))}, 3, Attrs({{"axis", int64_t{2}}}));
  auto halves = b.Nodes("Split", {qkv}, 2, Attrs({{"axis", int64_t{-1}}}));
  Value* last = b.Node("Slice", {qkv, b.Constant("s", Int64s({-1})), b.Constant("e", Int64s({INT64_MAX})),
                                 b.Constant("a", Int64s({1}))});
  Value* head = b.Node("Slice", {qkv, b.Constant("s2", Int64s({0})), b.Constant("e2", Int64s({64})),
                                 b.Constant("a2", Int64s({2}))});
  Value* strided = b.Node("Slice", {qkv, b.Constant("s3", Int64s({1})), b.Constant("e3", Int64s({192})),
                                    b.Constant("a3", Int64s({2})), b.Constant("st3", Int64s({3}))});
  Value* table = b.Input("table", kF32, Dims({1000, 64}));
  Value* ids = b.Input("ids", kI64, Dims({"batch", "seq"}));
  Value* emb = b.Node("Gather", {table, ids});
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(cat), "[batch, 4, past+seq, 16]");
  for (Value* p : parts) EXPECT_EQ(ShapeOf(p), "[batch, seq, 64]");
  for (Value* p : halves) EXPECT_EQ(ShapeOf(p), "[batch, seq, 96]");
  EXPECT_EQ(ShapeOf(last), "[batch, min(1,seq), 192]");  // seq may be 0
  EXPECT_EQ(ShapeOf(head), "[batch, seq, 64]");
  EXPECT_EQ(ShapeOf(strided), "[batch, seq, 64]");  // ceil(191 / 3)
  EXPECT_EQ(ShapeOf(emb), "[batch, seq, 64]");
}

TEST(CanonShapeInference, SliceOfAConstantBufferBySequenceLengthIsFresh) {
  // torch's mask[:T, :T] of a context x context buffer: min(seq, 64) is not provable.
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 64}));
  Value* mask = b.Constant("mask", *Tensor::Create(ElementType::kBool, {64, 64}));
  Value* seq = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("one", ScalarOf<int64_t>(1))});
  Value* end = b.Node("Unsqueeze", {seq, b.Constant("ax", Int64s({0}))});
  Value* rows = b.Node("Slice", {mask, b.Constant("s", Int64s({0})), end, b.Constant("a", Int64s({0}))}, {}, "rows");
  Value* all = b.Node("Slice", {x, b.Constant("s2", Int64s({0})), end, b.Constant("a2", Int64s({1}))});
  Value* square = b.Node("Slice", {rows, b.Constant("s3", Int64s({0})), end, b.Constant("a3", Int64s({1}))});
  Value* scores = b.Input("scores", kF32, Dims({"batch", 4, "seq", "seq"}));
  Value* masked = b.Node("Where", {square, b.Constant("fill", ScalarOf<float>(-1e4f)), scores});
  Value* from_two = b.Node("Slice", {mask, b.Constant("s4", Int64s({2})), end, b.Constant("a4", Int64s({0}))}, {},
                           "from_two");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(rows), "[min(64,seq), 64]");
  EXPECT_EQ(ShapeOf(square), "[min(64,seq), min(64,seq)]");
  // min(seq, 64) broadcasts against seq only when it is seq (or 1): the result is seq.
  EXPECT_EQ(ShapeOf(masked), "[batch, 4, seq, seq]");
  EXPECT_EQ(ShapeOf(all), "[batch, seq, 64]");  // slicing seq to seq keeps it
  EXPECT_EQ(ShapeOf(from_two), "[unk__from_two_out_0, 64]");
}

TEST(CanonShapeInference, SliceFromMinusASymbolicLengthToTheEnd) {
  // T5's position_bias[:, :, -seq_length:, :]: starts = Neg(seq); the last
  // min(seq, dim) entries, which is seq on a seq-long dim.
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 64}));
  Value* bias = b.Input("bias", kF32, Dims({1, 4, "seq", "total"}));
  Value* seq = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("one", ScalarOf<int64_t>(1))});
  Value* start = b.Node("Unsqueeze", {b.Node("Neg", {seq}), b.Constant("ax", Int64s({0}))});
  Value* to_end = b.Constant("e", Int64s({INT64_MAX}));
  Value* last = b.Node("Slice", {bias, start, to_end, b.Constant("a", Int64s({2}))}, {}, "last");
  Value* of_total = b.Node("Slice", {bias, start, to_end, b.Constant("a2", Int64s({3}))}, {}, "of_total");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(last), "[1, 4, seq, total]");
  EXPECT_EQ(ShapeOf(of_total), "[1, 4, seq, min(seq,total)]");
}

TEST(CanonShapeInference, UnsqueezeAndSqueezeAxesByOpset) {
  for (int opset : {11, 13}) {
    GraphBuilder b(opset);
    Value* x = b.Input("x", kF32, Dims({"batch", "seq"}));
    Value *u, *s;
    if (opset < 13) {
      u = b.Node("Unsqueeze", {x}, Attrs({{"axes", std::vector<int64_t>{1, -1}}}));
      s = b.Node("Squeeze", {u}, Attrs({{"axes", std::vector<int64_t>{1}}}));
    } else {
      u = b.Node("Unsqueeze", {x, b.Constant("axes", Int64s({1, -1}))});
      s = b.Node("Squeeze", {u, b.Constant("axes2", Int64s({1}))});
    }
    Infer(b.graph());
    EXPECT_EQ(ShapeOf(u), "[batch, 1, seq, 1]") << "opset " << opset;
    EXPECT_EQ(ShapeOf(s), "[batch, seq, 1]") << "opset " << opset;
  }
}

TEST(CanonShapeInference, SoftmaxWhereCastExpandLayerNormReduce) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 4, "seq", "seq"}));
  Value* cond = b.Input("cond", ElementType::kBool, Dims({"seq", "seq"}));
  Value* fill = b.Constant("fill", ScalarOf<float>(-1e9f));
  Value* masked = b.Node("Where", {cond, fill, x});
  Value* probs = b.Node("Softmax", {masked}, Attrs({{"axis", int64_t{-1}}}));
  Value* half = b.Node("Cast", {probs}, Attrs({{"to", int64_t{10}}}));
  Value* h = b.Input("h", kF32, Dims({"batch", "seq", 64}));
  Value* gamma = b.Constant("g", Floats({64}, std::vector<float>(64, 1.f)));
  auto ln = b.Nodes("LayerNormalization", {h, gamma}, 3, Attrs({{"axis", int64_t{-1}}}));
  Value* mean = b.Node("ReduceMean", {h}, Attrs({{"axes", std::vector<int64_t>{-1}}, {"keepdims", int64_t{0}}}));
  Value* sum = b.Node("ReduceSum", {h, b.Constant("axes", Int64s({1}))});
  Value* one = b.Input("one", kF32, Dims({"batch", 1, "seq", 1}));
  Value* expanded = b.Node("Expand", {one, b.Node("Shape", {x})});
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(masked), "[batch, 4, seq, seq]");
  EXPECT_EQ(masked->type(), kF32);
  EXPECT_EQ(ShapeOf(probs), "[batch, 4, seq, seq]");
  EXPECT_EQ(half->type(), ElementType::kFloat16);
  EXPECT_EQ(ShapeOf(ln[0]), "[batch, seq, 64]");
  EXPECT_EQ(ShapeOf(ln[1]), "[batch, seq, 1]");
  EXPECT_EQ(ShapeOf(mean), "[batch, seq]");
  EXPECT_EQ(ShapeOf(sum), "[batch, 1, 64]");
  EXPECT_EQ(ShapeOf(expanded), "[batch, 4, seq, seq]");
}

TEST(CanonShapeInference, TriluRangeConstantOfShape) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 64}));
  Value* seq = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("one", ScalarOf<int64_t>(1))});
  Value* zero = b.Constant("zero", ScalarOf<int64_t>(0));
  Value* step = b.Constant("step", ScalarOf<int64_t>(1));
  Value* positions = b.Node("Range", {zero, seq, step});
  Value* n = b.Input("n", kI64, Dims({}));
  Value* unknown = b.Node("Range", {zero, n, b.Constant("two", ScalarOf<int64_t>(2))}, {}, "odd_range");
  Value* fixed = b.Node("Range", {b.Constant("f0", ScalarOf<float>(0.5f)), b.Constant("f1", ScalarOf<float>(3.f)),
                                  b.Constant("f2", ScalarOf<float>(1.f))});
  Value* dims = b.Node("Concat", {b.Node("Unsqueeze", {seq, b.Constant("ax", Int64s({0}))}),
                                  b.Node("Unsqueeze", {seq, b.Constant("ax2", Int64s({0}))})},
                       Attrs({{"axis", int64_t{0}}}));
  Attributes value;
  value.Set("value", *Tensor::FromVector<float>({1}, {1.f}));
  Value* ones = b.Node("ConstantOfShape", {dims}, value);
  Value* tri = b.Node("Trilu", {ones}, Attrs({{"upper", int64_t{0}}}));
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(positions), "[seq]");
  EXPECT_EQ(positions->type(), kI64);
  EXPECT_EQ(ShapeOf(unknown), "[unk__odd_range_out_0]");
  EXPECT_EQ(ShapeOf(fixed), "[3]");
  EXPECT_EQ(ShapeOf(ones), "[seq, seq]");
  EXPECT_EQ(ones->type(), kF32);
  EXPECT_EQ(ShapeOf(tri), "[seq, seq]");
}

// Falcon's rotary cache: arange(float(seq)) is a float Range up to a cast
// integer; it has seq elements from an integral start with step 1, and no
// length is claimed for a fractional step or start.
TEST(CanonShapeInference, FloatRangeUpToACastLength) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq", 64}));
  Value* seq = b.Node("Gather", {b.Node("Shape", {x}), b.Constant("one", ScalarOf<int64_t>(1))});
  Value* limit = b.Node("Cast", {seq}, Attrs({{"to", static_cast<int64_t>(kF32)}}));
  Value* from_zero = b.Node("Range", {b.Constant("z", ScalarOf<float>(0.f)), limit, b.Constant("s", ScalarOf<float>(1.f))});
  Value* from_two = b.Node("Range", {b.Constant("z2", ScalarOf<float>(2.f)), limit, b.Constant("s2", ScalarOf<float>(1.f))},
                           {}, "from_two");
  Value* halves = b.Node("Range", {b.Constant("z3", ScalarOf<float>(0.f)), limit, b.Constant("s3", ScalarOf<float>(0.5f))},
                         {}, "halves");
  Value* shifted = b.Node("Range", {b.Constant("z4", ScalarOf<float>(0.5f)), limit, b.Constant("s4", ScalarOf<float>(1.f))},
                          {}, "shifted");
  // 2^24 + 1 is no float32: the cast rounds it, and no length is claimed.
  Value* rounded = b.Node("Cast", {b.Constant("big", ScalarOf<int64_t>((int64_t{1} << 24) + 1))},
                          Attrs({{"to", static_cast<int64_t>(kF32)}}));
  Value* beyond = b.Node("Range", {b.Constant("z5", ScalarOf<float>(0.f)), rounded, b.Constant("s5", ScalarOf<float>(1.f))},
                         {}, "beyond");
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(beyond), "[unk__beyond_out_0]");
  EXPECT_EQ(ShapeOf(from_zero), "[seq]");
  EXPECT_EQ(from_zero->type(), kF32);
  EXPECT_EQ(ShapeOf(from_two), "[unk__from_two_out_0]") << "seq - 2 may be negative";
  EXPECT_EQ(ShapeOf(halves), "[unk__halves_out_0]");
  EXPECT_EQ(ShapeOf(shifted), "[unk__shifted_out_0]");
}

TEST(CanonShapeInference, Einsum) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({"b", 4, "t", 16}));
  Value* k = b.Input("k", kF32, Dims({"b", 4, "s", 16}));
  Value* scores = b.Node("Einsum", {q, k}, Attrs({{"equation", std::string("bhqd,bhkd->bhqk")}}));
  Value* implicit = b.Node("Einsum", {q, k}, Attrs({{"equation", std::string("bhqd,bhkd")}}));
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(scores), "[b, 4, t, s]");
  EXPECT_EQ(ShapeOf(implicit), "[s, t]");  // letters used once, alphabetical
}

TEST(CanonShapeInference, FusedMultiHeadAttention) {
  GraphBuilder b;
  Value* q = b.Input("q", kF32, Dims({"batch", "seq", 64}));
  Value* k = b.Input("k", kF32, Dims({"batch", "seq", 32}));
  Value* v = b.Input("v", kF32, Dims({"batch", "seq", 48}));
  Value* past_k = b.Input("pk", kF32, Dims({"batch", 2, "past", 16}));
  Value* past_v = b.Input("pv", kF32, Dims({"batch", 2, "past", 24}));
  auto outs = b.Nodes(mha::kOpType, {q, k, v, nullptr, past_k, past_v}, 3,
                      Attrs({{mha::kNumHeads, int64_t{4}}, {mha::kKvNumHeads, int64_t{2}}}), "mha", mha::kDomain);
  Value* q4 = b.Input("q4", kF32, Dims({"batch", 4, "seq", 16}));
  Value* v4 = b.Input("v4", kF32, Dims({"batch", 4, "seq", 8}));
  Value* y4 = b.Node(mha::kOpType, {q4, q4, v4}, Attrs({{mha::kNumHeads, int64_t{4}}}), "mha4", mha::kDomain);
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(outs[0]), "[batch, seq, 96]");  // 4 heads x (48 / 2)
  EXPECT_EQ(ShapeOf(outs[1]), "[batch, 2, past+seq, 16]");
  EXPECT_EQ(ShapeOf(outs[2]), "[batch, 2, past+seq, 24]");
  EXPECT_EQ(ShapeOf(y4), "[batch, 4, seq, 8]");
}

TEST(CanonShapeInference, KeepsWhatTheImporterKnew) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", "seq"}));
  Value* y = b.Input("y", kF32, Dims({"other", "seq"}));
  Value* sum = b.Node("Add", {x, y});
  // value_info said more than inference can prove: [batch, seq] (batch vs other).
  sum->set_shape(Dims({"batch", "seq"}));
  Value* r = b.Node("Relu", {sum});
  r->set_shape(Dims({4, "seq"}));
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(sum), "[batch, seq]");
  EXPECT_EQ(ShapeOf(r), "[4, seq]");
}

// A symbol declared for a computed value (a present KV cache exported as
// "total_seq", the attention_mask's name for its length) is a claim no run
// checks: the dim inference proves from the inputs replaces it.
TEST(CanonShapeInference, AnInferredDimWinsOverADeclaredSymbol) {
  GraphBuilder b;
  Value* past = b.Input("past", kF32, Dims({"batch", "past_seq", 16}));
  Value* now = b.Input("now", kF32, Dims({"batch", "seq", 16}));
  b.Input("attention_mask", ElementType::kInt64, Dims({"batch", "total_seq"}));
  Value* present = b.Node("Concat", {past, now}, Attrs({{"axis", int64_t{1}}}));
  present->set_shape(Dims({"batch", "total_seq", 16}));
  b.Output(present);
  Infer(b.graph());
  EXPECT_EQ(ShapeOf(present), "[batch, past_seq+seq, 16]");
}

TEST(CanonShapeInference, InvalidNodesAreLeftAloneNotFatal) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({3, 4}));
  Value* y = b.Input("y", kF32, Dims({5, 4}));
  Value* sum = b.Node("Add", {x, y});
  Value* after = b.Node("Relu", {sum});
  Infer(b.graph());
  EXPECT_FALSE(sum->shape().has_value());
  EXPECT_FALSE(after->shape().has_value());
}

TEST(CanonShapeInference, ReportsChangeOnlyWhenSomethingWasLearnt) {
  GraphBuilder b;
  Value* x = b.Input("x", kF32, Dims({"batch", 8}));
  b.Output(b.Node("Relu", {x}));
  auto pass = MakeShapeInferencePass();
  EXPECT_TRUE(*RunPass(*pass, b.graph()));
  EXPECT_FALSE(*RunPass(*pass, b.graph()));
}

}  // namespace
}  // namespace attune::testing
