// Attention subgraphs written the ways exporters write them, built from a
// handful of switches, for the fusion's differential tests.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "tests/common/graph_builder.h"
#include "tests/common/torch_export_graphs.h"

namespace attune::testing {

struct AttentionGraphSpec {
  enum class Scale { kDivScores, kMulScores, kMulQ, kDivQ, kSqrtBoth, kNone };
  enum class Mask {
    kNone,
    kWhereBuffer,      // Where(Slice(triu(1) buffer), fill, scores)
    kWhereKeepBuffer,  // Where(Slice(tril buffer), scores, fill)
    kAddBuffer,        // Add(scores, Slice(0/-inf buffer))
    kTrilRuntime,      // ConstantOfShape -> Trilu -> Equal(0) -> Where
    kRangeLogic,       // Less(Range rows + past, Range cols) -> Where
    kSdpaBias,         // Trilu(ones) -> Where(Equal(., 0), -inf, 0) -> Add
    kAntiCausal,       // tril(-1) buffer as the hidden set
    kFlippedBuffer,    // triu(1) with one entry flipped beyond row 7
    kPaddingInput,     // causal OR a bool padding input
    kZeroBias,         // Add of an all-zero bias computed from shapes
    kCausalExceptT11,  // causal, but anti-causal when 2T = 22 (T = 11 is no probe length): only verify mode sees it
    kWindowRange,      // Range rows - Range cols compared with 0 and the constant `window`, no buffer
    kWindowTrilu,      // Trilu(Trilu(ones, k 0), upper, k 1 - window) as the keep mask (no past)
    kPaddingAdditive,  // Add(scores, Where(causal OR padded, fill, 0)) from the bool padding input
    // GPT-2 as Hugging Face writes it, from an int64 attention_mask [batch, total]:
    // Where(causal keep buffer, scores, fill) + (1 - attention_mask[:, None, None, :]) * fill.
    kGpt2Padding,
    kGpt2PaddingShifted,   // trap: the causal buffer shows one key ahead
    kPaddingOnQueries,     // trap: (1 - attention_mask[:, None, :, None]) * fill, the query axis
    kPaddingInverted,      // trap: attention_mask * fill (1 hides)
    kBertPadding,          // no causal part: scores + (1 - attention_mask[:, None, None, :]) * fill
  };
  enum class Repeat { kExpand, kTileGrouped, kTileFlat, kNone };

  Scale scale = Scale::kDivScores;
  Mask mask = Mask::kWhereBuffer;
  float fill = -std::numeric_limits<float>::infinity();
  bool mask_before_scale = false;
  int64_t window = 0;            // with buffer masks: also hide keys `window` or more back
  bool k_pretransposed = false;  // K through one Transpose(0,2,3,1)
  bool single_head = false;      // rank-3 scores, no head split
  bool past = false;             // KV cache inputs concatenated before the scores
  int64_t heads = 4;
  int64_t kv_heads = 4;
  Repeat repeat = Repeat::kExpand;
  int64_t head_dim = 8;
  int64_t softmax_axis = -1;
  bool omit_softmax_axis = false;  // the opset's default: 1 before opset 13, -1 from 13
  bool dropout = false;
  bool nan_guard = false;
  bool identity_wrappers = false;
  bool scale_from_input = false;  // divide by ReduceMax(|x|) instead of a constant
  int opset = 17;
  int64_t context = 32;  // mask buffer side
  int64_t pad_left = 0;  // with a padding input: batch 1's first keys padded (its first rows see no key)
  int64_t pad_right = 0;  // with an int64 attention_mask: batch 1's last keys padded
};

/// The masks read from an int64 attention_mask [batch, past + seq] input.
inline bool IntPaddingMask(AttentionGraphSpec::Mask m) {
  using M = AttentionGraphSpec::Mask;
  return m == M::kGpt2Padding || m == M::kGpt2PaddingShifted || m == M::kPaddingOnQueries || m == M::kPaddingInverted ||
         m == M::kBertPadding;
}

namespace attention_graphs_detail {

inline Tensor BoolMatrix(int64_t n, const std::function<bool(int64_t, int64_t)>& f) {
  Tensor t = *Tensor::Create(ElementType::kBool, {n, n});
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) t.data<bool>()[i * n + j] = f(i, j);
  return t;
}

inline Value* Scalar(GraphBuilder& b, const std::string& name, float v) { return b.Constant(name, ScalarOf<float>(v)); }

}  // namespace attention_graphs_detail

/// The graph: inputs x [batch, seq, heads·head_dim] (+ past_key/past_value
/// [batch, kv_heads, past, head_dim], + pad bool [batch, seq]); outputs y
/// (+ present_key, present_value).
inline std::unique_ptr<Graph> BuildAttentionGraph(const AttentionGraphSpec& s) {
  namespace d = attention_graphs_detail;
  using Mask = AttentionGraphSpec::Mask;
  using Scale = AttentionGraphSpec::Scale;
  GraphBuilder b(s.opset);
  const int64_t heads = s.single_head ? 1 : s.heads;
  const int64_t kv_heads = s.single_head ? 1 : s.kv_heads;
  const int64_t D = s.head_dim, C = heads * D, Ckv = kv_heads * D;
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", C}));
  Value* past_k = nullptr;
  Value* past_v = nullptr;
  if (s.past) {
    past_k = b.Input("past_key", ElementType::kFloat32, Dims({"batch", kv_heads, "past", D}));
    past_v = b.Input("past_value", ElementType::kFloat32, Dims({"batch", kv_heads, "past", D}));
  }
  const bool padding = s.mask == Mask::kPaddingInput || s.mask == Mask::kPaddingAdditive;
  Value* pad = padding ? b.Input("pad", ElementType::kBool, Dims({"batch", "seq"})) : nullptr;
  const bool int_padding = IntPaddingMask(s.mask);
  Value* attention_mask = int_padding ? b.Input("attention_mask", ElementType::kInt64, Dims({"batch", "total"})) : nullptr;

  auto axes = [&](std::vector<int64_t> a) { return b.Constant("axes", Int64s(a)); };
  auto unsqueeze = [&](Value* v, std::vector<int64_t> a) {
    if (s.opset >= 13) return b.Node("Unsqueeze", {v, axes(a)});
    return b.Node("Unsqueeze", {v}, Attrs({{"axes", a}}));
  };
  auto perm = [](std::vector<int64_t> p) { return Attrs({{"perm", p}}); };
  Value* wq = b.Constant("Wq", PseudoRandom({C, C}, 1));
  Value* wk = b.Constant("Wk", PseudoRandom({C, Ckv}, 2));
  Value* wv = b.Constant("Wv", PseudoRandom({C, Ckv}, 3));
  Value* q = b.Node("MatMul", {x, wq}, {}, "q_proj");
  Value* k = b.Node("MatMul", {x, wk}, {}, "k_proj");
  Value* v = b.Node("MatMul", {x, wv}, {}, "v_proj");

  // T (1-D [T]) and, with a cache, P and P + T.
  Value* shape_x = b.Node("Shape", {x});
  Value* t_scalar = b.Node("Gather", {shape_x, b.Constant("one", ScalarOf<int64_t>(1))}, Attrs({{"axis", int64_t{0}}}));
  Value* t1 = unsqueeze(t_scalar, {0});
  Value* p1 = nullptr;
  Value* total1 = t1;

  Value *q4, *k4, *v4, *kt;
  Value* present_k = nullptr;
  Value* present_v = nullptr;
  if (s.single_head) {
    q4 = q;
    k4 = k;
    v4 = v;
    kt = b.Node("Transpose", {k4}, perm({0, 2, 1}));
  } else {
    auto split = [&](Value* t, int64_t h, const char* name) {
      Value* r = b.Node("Reshape", {t, b.Constant("split_shape", Int64s({0, 0, h, D}))}, {}, std::string(name) + "_split");
      return r;
    };
    Value* qr = split(q, heads, "q");
    Value* kr = split(k, kv_heads, "k");
    Value* vr = split(v, kv_heads, "v");
    q4 = b.Node("Transpose", {qr}, perm({0, 2, 1, 3}), "q_heads");
    v4 = b.Node("Transpose", {vr}, perm({0, 2, 1, 3}), "v_heads");
    const bool direct_kt = s.k_pretransposed && !s.past && kv_heads == heads;
    k4 = direct_kt ? nullptr : b.Node("Transpose", {kr}, perm({0, 2, 1, 3}), "k_heads");
    if (s.past) {
      k4 = b.Node("Concat", {past_k, k4}, Attrs({{"axis", int64_t{2}}}), "present_key");
      v4 = b.Node("Concat", {past_v, v4}, Attrs({{"axis", int64_t{2}}}), "present_value");
      present_k = k4;
      present_v = v4;
      Value* p_scalar =
          b.Node("Gather", {b.Node("Shape", {past_k}), b.Constant("two", ScalarOf<int64_t>(2))}, Attrs({{"axis", int64_t{0}}}));
      p1 = unsqueeze(p_scalar, {0});
      total1 = b.Node("Add", {p1, t1});
    }
    if (kv_heads != heads && s.repeat != AttentionGraphSpec::Repeat::kNone) {
      const int64_t g = heads / kv_heads;
      auto repeat = [&](Value* t) -> Value* {
        if (s.repeat == AttentionGraphSpec::Repeat::kTileFlat)
          return b.Node("Tile", {t, b.Constant("reps", Int64s({1, g, 1, 1}))});
        Value* u = unsqueeze(t, {2});
        Value* e = s.repeat == AttentionGraphSpec::Repeat::kExpand
                       ? b.Node("Expand", {u, b.Constant("expand_shape", Int64s({1, 1, g, 1, 1}))})
                       : b.Node("Tile", {u, b.Constant("reps", Int64s({1, 1, g, 1, 1}))});
        return b.Node("Reshape", {e, b.Constant("merge_groups", Int64s({0, heads, -1, D}))});
      };
      k4 = repeat(k4);
      v4 = repeat(v4);
    }
    kt = direct_kt ? b.Node("Transpose", {kr}, perm({0, 2, 3, 1}), "k_t")
                   : b.Node("Transpose", {k4}, perm({0, 1, 3, 2}), "k_t");
  }

  const float inv_sqrt = 1.0f / std::sqrt(static_cast<float>(D));
  if (s.scale == Scale::kMulQ) q4 = b.Node("Mul", {q4, d::Scalar(b, "q_scale", inv_sqrt)});
  if (s.scale == Scale::kDivQ) q4 = b.Node("Div", {q4, d::Scalar(b, "q_scale", std::sqrt(static_cast<float>(D)))});
  if (s.scale == Scale::kSqrtBoth) {
    const float quarter = std::pow(static_cast<float>(D), -0.25f);
    q4 = b.Node("Mul", {q4, d::Scalar(b, "q_scale", quarter)});
    kt = b.Node("Mul", {d::Scalar(b, "k_scale", quarter), kt});
  }
  Value* scores = b.Node("MatMul", {q4, kt}, {}, "scores");
  if (s.identity_wrappers) scores = b.Node("Identity", {scores});

  auto apply_scale = [&](Value* t) -> Value* {
    if (s.scale_from_input) {
      Value* m = b.Node("ReduceMax", {b.Node("Abs", {x})}, Attrs({{"keepdims", int64_t{0}}}));
      return b.Node("Div", {t, m});
    }
    if (s.scale == Scale::kDivScores) return b.Node("Div", {t, d::Scalar(b, "sqrt_d", std::sqrt(static_cast<float>(D)))});
    if (s.scale == Scale::kMulScores) return b.Node("Mul", {d::Scalar(b, "inv_sqrt_d", inv_sqrt), t});
    return t;
  };

  // Rows [P, P + T) and columns [0, P + T) of a buffer.
  auto slice_buffer = [&](Tensor buffer) {
    Value* buf = b.Constant("mask_buffer", std::move(buffer));
    Value* zero = b.Constant("zero1", Int64s({0}));
    Value* row_start = p1 != nullptr ? p1 : zero;
    Value* rows = b.Node("Slice", {buf, row_start, total1, zero, b.Constant("step", Int64s({1}))});
    return b.Node("Slice", {rows, zero, total1, b.Constant("axis1", Int64s({1})), b.Constant("step", Int64s({1}))});
  };
  const int64_t L = s.context;
  auto causal_hidden = [&](int64_t i, int64_t j) { return j > i || (s.window > 0 && j <= i - s.window); };
  Value* fill = d::Scalar(b, "fill", s.fill);
  auto apply_mask = [&](Value* t) -> Value* {
    switch (s.mask) {
      case Mask::kNone: return t;
      case Mask::kWhereBuffer: {
        Value* cond = b.Node("Cast", {slice_buffer(d::BoolMatrix(L, causal_hidden))}, Attrs({{"to", int64_t{9}}}));
        return b.Node("Where", {cond, fill, t}, {}, "mask");
      }
      case Mask::kWhereKeepBuffer: {
        Value* keep = slice_buffer(d::BoolMatrix(L, [&](int64_t i, int64_t j) { return !causal_hidden(i, j); }));
        return b.Node("Where", {keep, t, fill}, {}, "mask");
      }
      case Mask::kAntiCausal:
        return b.Node("Where", {slice_buffer(d::BoolMatrix(L, [](int64_t i, int64_t j) { return j < i; })), fill, t});
      case Mask::kFlippedBuffer: {
        auto flipped = [&](int64_t i, int64_t j) { return (i == 9 && j == 3) ? true : causal_hidden(i, j); };
        return b.Node("Where", {slice_buffer(d::BoolMatrix(L, flipped)), fill, t});
      }
      case Mask::kAddBuffer: {
        Tensor buf = *Tensor::Create(ElementType::kFloat32, {L, L});
        for (int64_t i = 0; i < L; ++i)
          for (int64_t j = 0; j < L; ++j) buf.data<float>()[i * L + j] = causal_hidden(i, j) ? s.fill : 0.0f;
        return b.Node("Add", {slice_buffer(std::move(buf)), t}, {}, "mask");
      }
      case Mask::kTrilRuntime: {
        Attributes one;
        one.Set("value", *Tensor::FromVector<float>({1}, {1.0f}));
        Value* ones = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, one);
        Value* tril = b.Node("Trilu", {ones}, Attrs({{"upper", int64_t{0}}}));
        Value* hidden = b.Node("Equal", {tril, d::Scalar(b, "zero_f", 0.0f)});
        return b.Node("Where", {hidden, fill, t}, {}, "mask");
      }
      case Mask::kRangeLogic: {
        Value* zero = b.Constant("zero_s", ScalarOf<int64_t>(0));
        Value* one = b.Constant("one_s", ScalarOf<int64_t>(1));
        auto scalar_of = [&](Value* v1) {
          return b.Node("Squeeze", {v1, b.Constant("sq_axes", Int64s({0}))});
        };
        Value* rows = b.Node("Range", {zero, scalar_of(t1), one});
        if (p1 != nullptr) rows = b.Node("Add", {rows, scalar_of(p1)});
        Value* cols = b.Node("Range", {zero, scalar_of(total1), one});
        Value* hidden = b.Node("Less", {unsqueeze(rows, {1}), unsqueeze(cols, {0})});
        return b.Node("Where", {hidden, fill, t}, {}, "mask");
      }
      case Mask::kSdpaBias: {
        Attributes one;
        one.Set("value", *Tensor::FromVector<float>({1}, {1.0f}));
        Value* ones = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, one);
        Value* tril = b.Node("Trilu", {ones}, Attrs({{"upper", int64_t{0}}}));
        Value* bias = b.Node("Where", {b.Node("Equal", {tril, d::Scalar(b, "zero_f", 0.0f)}), fill,
                                       d::Scalar(b, "zero_bias", 0.0f)});
        return b.Node("Add", {t, bias}, {}, "mask");
      }
      case Mask::kZeroBias: {
        Attributes zero;
        zero.Set("value", *Tensor::FromVector<float>({1}, {0.0f}));
        Value* bias = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, zero);
        return b.Node("Add", {t, bias}, {}, "mask");
      }
      case Mask::kCausalExceptT11: {
        Attributes one;
        one.Set("value", *Tensor::FromVector<float>({1}, {1.0f}));
        Value* ones = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, one);
        Value* hidden = b.Node("Equal", {b.Node("Trilu", {ones}, Attrs({{"upper", int64_t{0}}})), d::Scalar(b, "zero_f", 0.0f)});
        Value* anti = b.Node("Equal", {b.Node("Trilu", {ones}, Attrs({{"upper", int64_t{1}}})), d::Scalar(b, "zero_f", 0.0f)});
        Value* twice = b.Node("Mul", {t_scalar, b.Constant("two_s", ScalarOf<int64_t>(2))});
        Value* is_11 = b.Node("Equal", {twice, b.Constant("twenty_two", ScalarOf<int64_t>(22))});
        return b.Node("Where", {b.Node("Where", {is_11, anti, hidden}), fill, t}, {}, "mask");
      }
      case Mask::kWindowRange: {
        Value* zero = b.Constant("zero_s", ScalarOf<int64_t>(0));
        Value* one = b.Constant("one_s", ScalarOf<int64_t>(1));
        auto scalar_of = [&](Value* v1) { return b.Node("Squeeze", {v1, b.Constant("sq_axes", Int64s({0}))}); };
        Value* rows = b.Node("Range", {zero, scalar_of(t1), one});
        if (p1 != nullptr) rows = b.Node("Add", {rows, scalar_of(p1)});
        Value* cols = b.Node("Range", {zero, scalar_of(total1), one});
        Value* back = b.Node("Sub", {unsqueeze(rows, {1}), unsqueeze(cols, {0})});  // how far key j is behind i
        Value* future = b.Node("Less", {back, zero});
        Value* too_far = b.Node("Not", {b.Node("Less", {back, b.Constant("window", ScalarOf<int64_t>(s.window))})});
        return b.Node("Where", {b.Node("Or", {future, too_far}), fill, t}, {}, "mask");
      }
      case Mask::kWindowTrilu: {
        Attributes one;
        one.Set("value", *Tensor::FromVector<float>({1}, {1.0f}));
        Value* ones = b.Node("ConstantOfShape", {b.Node("Concat", {t1, t1}, Attrs({{"axis", int64_t{0}}}))}, one);
        Value* tril = b.Node("Trilu", {ones, b.Constant("k0", ScalarOf<int64_t>(0))}, Attrs({{"upper", int64_t{0}}}));
        Value* band = b.Node("Trilu", {tril, b.Constant("k_window", ScalarOf<int64_t>(1 - s.window))},
                             Attrs({{"upper", int64_t{1}}}));
        Value* keep = b.Node("Cast", {band}, Attrs({{"to", int64_t{9}}}));
        return b.Node("Where", {keep, t, fill}, {}, "mask");
      }
      case Mask::kPaddingAdditive: {
        Value* causal = slice_buffer(d::BoolMatrix(L, causal_hidden));
        Value* padded = b.Node("Not", {unsqueeze(pad, {1, 2})});
        Value* bias = b.Node("Where", {b.Node("Or", {causal, padded}), fill, d::Scalar(b, "zero_bias", 0.0f)});
        return b.Node("Add", {t, bias}, {}, "mask");
      }
      case Mask::kGpt2Padding:
      case Mask::kGpt2PaddingShifted:
      case Mask::kPaddingOnQueries:
      case Mask::kPaddingInverted:
      case Mask::kBertPadding: {
        Value* m = b.Node("Cast", {attention_mask}, Attrs({{"to", int64_t{1}}}));
        Value* hide = s.mask == Mask::kPaddingInverted ? m : b.Node("Sub", {d::Scalar(b, "one_f", 1.0f), m});
        Value* additive = b.Node("Mul", {unsqueeze(hide, s.mask == Mask::kPaddingOnQueries ? std::vector<int64_t>{1, 3}
                                                                                          : std::vector<int64_t>{1, 2}),
                                         fill});
        if (s.mask == Mask::kBertPadding) return b.Node("Add", {t, additive}, {}, "mask");
        const int64_t ahead = s.mask == Mask::kGpt2PaddingShifted ? 1 : 0;
        Value* keep = slice_buffer(d::BoolMatrix(L, [&](int64_t i, int64_t j) { return !causal_hidden(i + ahead, j); }));
        Value* causal = b.Node("Where", {keep, t, fill}, {}, "causal_mask");
        return b.Node("Add", {causal, additive}, {}, "mask");
      }
      case Mask::kPaddingInput: {
        Value* causal = slice_buffer(d::BoolMatrix(L, causal_hidden));
        Value* padded = b.Node("Not", {unsqueeze(pad, {1, 2})});
        return b.Node("Where", {b.Node("Or", {causal, padded}), fill, t}, {}, "mask");
      }
    }
    return t;
  };
  Value* pre = s.mask_before_scale ? apply_scale(apply_mask(scores)) : apply_mask(apply_scale(scores));
  Value* p = b.Node("Softmax", {pre}, s.omit_softmax_axis ? Attributes() : Attrs({{"axis", s.softmax_axis}}), "softmax");
  if (s.nan_guard) p = b.Node("Where", {b.Node("IsNaN", {p}), d::Scalar(b, "nan_zero", 0.0f), p});
  if (s.dropout) p = b.Node("Dropout", {p, d::Scalar(b, "ratio", 0.1f)});
  if (s.identity_wrappers) p = b.Node("Identity", {p});
  Value* y4 = b.Node("MatMul", {p, v4}, {}, "attn_out");
  Value* merged = y4;
  if (!s.single_head) {
    Value* t = b.Node("Transpose", {y4}, perm({0, 2, 1, 3}));
    merged = b.Node("Reshape", {t, b.Constant("merge_shape", Int64s({0, 0, C}))});
  }
  Value* y = b.Node("MatMul", {merged, b.Constant("Wo", PseudoRandom({C, C}, 4))}, {}, "o_proj");
  b.Output(y);
  if (present_k != nullptr) {
    b.Output(present_k);
    b.Output(present_v);
  }
  return b.Build();
}

/// A built attention graph after the default pipeline (fused, with verify mode, or
/// not), its fusion report and the pipeline's status.
struct OptimisedAttentionGraph {
  std::unique_ptr<Graph> graph;
  FusionReport report;
  absl::Status status;
};
inline OptimisedAttentionGraph OptimiseAttentionGraph(const AttentionGraphSpec& spec, bool fuse) {
  OptimisedAttentionGraph r;
  r.graph = BuildAttentionGraph(spec);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &r.report;
  context.verify_fusion = fuse;
  r.status = DefaultPipeline(fuse)->Run(*r.graph, context);
  return r;
}

/// Inputs for the graph at (batch 2, seq t, past p).
inline std::vector<Tensor> AttentionGraphInputs(const AttentionGraphSpec& s, int64_t t, int64_t p) {
  const int64_t heads = s.single_head ? 1 : s.heads;
  const int64_t kv_heads = s.single_head ? 1 : s.kv_heads;
  std::vector<Tensor> in = {PseudoRandom({2, t, heads * s.head_dim}, 11)};
  if (s.past) {
    in.push_back(PseudoRandom({2, kv_heads, p, s.head_dim}, 12));
    in.push_back(PseudoRandom({2, kv_heads, p, s.head_dim}, 13));
  }
  if (IntPaddingMask(s.mask)) {
    // Batch 1: its first pad_left keys and its last pad_right keys padded.
    Tensor mask = *Tensor::Create(ElementType::kInt64, {2, p + t});
    for (int64_t j = 0; j < p + t; ++j) {
      mask.data<int64_t>()[j] = 1;
      mask.data<int64_t>()[p + t + j] = j < s.pad_left || j >= p + t - s.pad_right ? 0 : 1;
    }
    in.push_back(mask);
  }
  if (s.mask == AttentionGraphSpec::Mask::kPaddingInput || s.mask == AttentionGraphSpec::Mask::kPaddingAdditive) {
    Tensor pad = *Tensor::Create(ElementType::kBool, {2, t});
    // Batch 1 has its last 2 keys padded when some key stays; with pad_left
    // its first keys too, so that its first rows see no key at all.
    for (int64_t i = 0; i < 2 * t; ++i) {
      const bool right = t >= 3 && i >= t && i % t >= t - 2;
      const bool left = i >= t && i % t < s.pad_left;
      pad.data<bool>()[i] = !(right || left);
    }
    in.push_back(pad);
  }
  return in;
}

}  // namespace attune::testing
