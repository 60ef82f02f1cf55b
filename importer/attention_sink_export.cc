// An attune.MultiHeadAttention with attention sinks written back as the
// standard subgraph it replaced: ONNX Attention has no sink. Scores =
// Q·Kᵀ·scale (softcap), the causal/window part, key padding and an explicit
// mask applied by Where(hidden, -inf, scores) (or an additive mask added),
// the sink column (one logit per head expanded to (B, H, T, 1)) concatenated
// after the keys, Softmax, the column sliced off, P·V. A row whose every key
// is hidden then gives its finite sink every weight: zeros, as the fused op
// gives with -inf or finfo.min fills.
//
// The same writer, without a sink column, writes a node whose probabilities
// (output 3, the attention weights) are read when ONNX Attention cannot stand
// for it: the masks are then added as -inf (a NaN or +inf score at a hidden
// key still makes its row NaN, as the added masks of the replaced subgraph
// do), and a row whose every key is hidden is NaN, which is what the fused op
// gives only with masked_rows "nan" (or where no row can be fully hidden).
#include "importer/attention_sink_export.h"

#include <cmath>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/schema/multi_head_attention.h"

namespace attune {
namespace {

// Adds nodes beside `node`, each output a fresh value named after it.
class SubgraphWriter {
 public:
  SubgraphWriter(Graph& graph, const Node& node) : graph_(graph), prefix_(node.name() + "/") {}

  Value* Op(const std::string& op, std::vector<Value*> inputs, ElementType type, Attributes attrs = {}) {
    const std::string name = graph_.UniqueName(prefix_ + op);
    Value* out = graph_.AddValue(name + "_output", type);
    graph_.AddNode(op, "", name, std::move(inputs), {out}, std::move(attrs));
    return out;
  }
  Value* Ints(const std::vector<int64_t>& values, bool scalar = false) {
    auto t = scalar ? Tensor::Scalar<int64_t>(values[0])
                    : *Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values);
    return graph_.AddConstant(graph_.UniqueName(prefix_ + "const"), std::move(t));
  }
  // A scalar of `type` (float32, float16, bfloat16) holding `x`.
  Value* Scalar(float x, ElementType type) {
    Value* f = graph_.AddConstant(graph_.UniqueName(prefix_ + "const"), Tensor::Scalar<float>(x));
    return type == ElementType::kFloat32 ? f : Cast(f, type);
  }
  Value* Cast(Value* x, ElementType type) {
    Attributes a;
    a.Set("to", static_cast<int64_t>(type));
    return Op("Cast", {x}, type, std::move(a));
  }
  Value* Transpose(Value* x, std::vector<int64_t> perm) {
    Attributes a;
    a.Set("perm", std::move(perm));
    return Op("Transpose", {x}, x->type(), std::move(a));
  }
  // Dim `axis` of x's shape as an int64 scalar.
  Value* DimOf(Value* x, int64_t axis) {
    return Op("Gather", {Op("Shape", {x}, ElementType::kInt64), Ints({axis}, true)}, ElementType::kInt64);
  }

 private:
  Graph& graph_;
  std::string prefix_;
};

// (B, T, N·D) -> (B, N, T, D).
Value* SplitHeads(SubgraphWriter& w, Value* x, int64_t heads, int64_t head_dim) {
  Value* r = w.Op("Reshape", {x, w.Ints({0, 0, heads, head_dim})}, x->type());
  return w.Transpose(r, {0, 2, 1, 3});
}

// (B, KV, S, D) -> (B, KV·G, S, D), each kv head repeated G times in a row.
Value* RepeatHeads(SubgraphWriter& w, Value* x, int64_t groups, int64_t heads, int64_t head_dim) {
  if (groups == 1) return x;
  Value* u = w.Op("Unsqueeze", {x, w.Ints({2})}, x->type());
  Value* e = w.Op("Expand", {u, w.Ints({1, 1, groups, 1, 1})}, x->type());
  return w.Op("Reshape", {e, w.Ints({0, heads, -1, head_dim})}, x->type());
}

// Whether keys are hidden by the causal/window part: (T, S) bool, or nullptr.
Value* StructuralHidden(SubgraphWriter& w, Value* qh, Value* kh, bool causal, int64_t window) {
  if (!causal && window <= 0) return nullptr;
  Value* t = w.DimOf(qh, 2);
  Value* s = w.DimOf(kh, 2);
  Value* first = w.Op("Sub", {s, t}, ElementType::kInt64);  // bottom-right: the last query sees the last key
  Value* rows = w.Op("Unsqueeze", {w.Op("Range", {first, s, w.Ints({1}, true)}, ElementType::kInt64), w.Ints({1})},
                     ElementType::kInt64);
  Value* keys = w.Op("Range", {w.Ints({0}, true), s, w.Ints({1}, true)}, ElementType::kInt64);
  Value* hidden = nullptr;
  if (causal) hidden = w.Op("Greater", {keys, rows}, ElementType::kBool);
  if (window > 0) {
    Value* edge = w.Op("Sub", {rows, w.Ints({window}, true)}, ElementType::kInt64);
    Value* before = w.Op("LessOrEqual", {keys, edge}, ElementType::kBool);
    hidden = hidden ? w.Op("Or", {hidden, before}, ElementType::kBool) : before;
  }
  return hidden;
}

// Softmax over the scores and a sink column: (H) -> (1, H, 1, 1) expanded
// to (B, H, T, 1) and concatenated after the keys, sliced off again.
Value* SinkSoftmax(SubgraphWriter& w, Value* scores, Value* sinks, int64_t heads) {
  const ElementType type = scores->type();
  if (sinks->type() != type) sinks = w.Cast(sinks, type);
  Value* per_head = w.Op("Reshape", {sinks, w.Ints({1, heads, 1, 1})}, type);
  Value* rows_shape = w.Op("Slice", {w.Op("Shape", {scores}, ElementType::kInt64), w.Ints({0}), w.Ints({3})},
                           ElementType::kInt64);
  Attributes axis0;
  axis0.Set("axis", int64_t{0});
  Value* column_shape = w.Op("Concat", {rows_shape, w.Ints({1})}, ElementType::kInt64, axis0);
  Value* column = w.Op("Expand", {per_head, column_shape}, type);
  Attributes last_axis;
  last_axis.Set("axis", int64_t{-1});
  Value* logits = w.Op("Concat", {scores, column}, type, last_axis);
  Value* probs = w.Op("Softmax", {logits}, type, last_axis);
  return w.Op("Slice", {probs, w.Ints({0}), w.Ints({-1}), w.Ints({-1})}, type);
}

std::string Unsupported(const Node& node, int opset) {
  const Attributes& a = node.attributes();
  if (opset < 13) return absl::StrCat("the model's opset ", opset, " is below 13 (Softmax over one axis)");
  for (const char* name : {mha::kScoreLimit, mha::kScoreRounding, mha::kPositionBias, mha::kNanGuard,
                           mha::kHiddenNonFinite})
    if (a.Has(name)) return absl::StrCat("attribute ", name, " is not written back as a subgraph");
  if (node.input(mha::kInputPastKey) != nullptr || node.output(mha::kOutputPresentKey) != nullptr ||
      node.output(mha::kOutputPresentValue) != nullptr)
    return "a KV cache is not written back as a subgraph";
  if (node.input(mha::kInputSinks) == nullptr) {
    const bool rows_hidden = node.input(mha::kInputMask) != nullptr || node.input(mha::kInputKeyPadding) != nullptr;
    const std::string rows = a.GetString(mha::kMaskedRows, "zeros").value_or("");
    if (rows_hidden && rows != mha::ToString(mha::MaskedRows::kNaN))
      return absl::StrCat("a row whose every key is hidden gives \"", rows,
                          "\" (masked_rows), where the subgraph's softmax of -inf scores gives NaN");
  }
  const Value* q = node.input(mha::kInputQ);
  if (!q->shape() || q->shape()->empty() || !q->shape()->back().is_known()) return "Q's last dim is not known";
  const size_t rank = q->shape()->size();
  if (rank == 3 && a.GetInt(mha::kNumHeads, 0).value_or(0) <= 0) return "3-D Q without num_heads";
  if (rank != 3 && rank != 4) return "Q is neither 3-D nor 4-D";
  const Value* mask = node.input(mha::kInputMask);
  if (mask != nullptr && mask->type() != ElementType::kBool && mask->type() != q->type())
    return "an explicit mask neither bool nor of Q's type";
  return "";
}

}  // namespace

std::string WriteAttentionAsSubgraph(Graph& graph, Node* node, int opset) {
  if (std::string why = Unsupported(*node, opset); !why.empty()) return why;
  const Attributes& a = node->attributes();
  SubgraphWriter w(graph, *node);
  Value* q = node->input(mha::kInputQ);
  const ElementType type = q->type();
  const bool three_d = q->shape()->size() == 3;
  const int64_t last = q->shape()->back().value();
  int64_t heads = a.GetInt(mha::kNumHeads, 0).value_or(0);
  if (!three_d && heads <= 0 && (*q->shape())[1].is_known()) heads = (*q->shape())[1].value();
  if (heads <= 0) return "the number of heads is not known";
  const int64_t kv_heads = a.GetInt(mha::kKvNumHeads, heads).value_or(heads);
  if (kv_heads <= 0 || heads % kv_heads != 0) return "kv_num_heads does not divide num_heads";
  const int64_t head_dim = three_d ? last / heads : last;
  Value* k = node->input(mha::kInputK);
  Value* v = node->input(mha::kInputV);
  const Value* v_in = v;
  if (!v_in->shape() || !v_in->shape()->back().is_known()) return "V's last dim is not known";
  const int64_t v_head_dim = three_d ? v_in->shape()->back().value() / kv_heads : v_in->shape()->back().value();

  Value* qh = three_d ? SplitHeads(w, q, heads, head_dim) : q;
  Value* kh = three_d ? SplitHeads(w, k, kv_heads, head_dim) : k;
  Value* vh = three_d ? SplitHeads(w, v, kv_heads, v_head_dim) : v;
  kh = RepeatHeads(w, kh, heads / kv_heads, heads, head_dim);
  vh = RepeatHeads(w, vh, heads / kv_heads, heads, v_head_dim);

  const float scale = a.GetFloat(mha::kScale, 1.0f / std::sqrt(static_cast<float>(head_dim)))
                          .value_or(1.0f / std::sqrt(static_cast<float>(head_dim)));
  Value* scores = w.Op("MatMul", {qh, w.Transpose(kh, {0, 1, 3, 2})}, type);
  scores = w.Op("Mul", {scores, w.Scalar(scale, type)}, type);
  if (const float cap = a.GetFloat(mha::kSoftcap, 0.0f).value_or(0.0f); cap > 0.0f) {
    Value* c = w.Scalar(cap, type);
    scores = w.Op("Mul", {w.Op("Tanh", {w.Op("Div", {scores, c}, type)}, type), c}, type);
  }
  Value* hidden = StructuralHidden(w, qh, kh, a.GetInt(mha::kCausal, 0).value_or(0) != 0,
                                   a.GetInt(mha::kWindow, 0).value_or(0));
  if (Value* padding = node->input(mha::kInputKeyPadding)) {
    // 0 pads a key: (B, S) -> (B, 1, 1, S).
    Value* shows = padding->type() == ElementType::kBool ? padding : w.Cast(padding, ElementType::kBool);
    Value* pads = w.Op("Unsqueeze", {w.Op("Not", {shows}, ElementType::kBool), w.Ints({1, 2})}, ElementType::kBool);
    hidden = hidden ? w.Op("Or", {hidden, pads}, ElementType::kBool) : pads;
  }
  if (Value* mask = node->input(mha::kInputMask)) {
    if (mask->type() == ElementType::kBool) {
      Value* blocked = w.Op("Not", {mask}, ElementType::kBool);
      hidden = hidden ? w.Op("Or", {hidden, blocked}, ElementType::kBool) : blocked;
    } else {
      scores = w.Op("Add", {scores, mask}, type);
    }
  }
  Value* sinks = node->input(mha::kInputSinks);
  Value* minus_inf = w.Scalar(-std::numeric_limits<float>::infinity(), type);
  if (hidden != nullptr && sinks != nullptr) {
    scores = w.Op("Where", {hidden, minus_inf, scores}, type);
  } else if (hidden != nullptr) {
    scores = w.Op("Add", {scores, w.Op("Where", {hidden, minus_inf, w.Scalar(0.0f, type)}, type)}, type);
  }
  Attributes last_axis;
  last_axis.Set("axis", int64_t{-1});
  Value* p = sinks != nullptr ? SinkSoftmax(w, scores, sinks, heads) : w.Op("Softmax", {scores}, type, last_axis);
  Value* y = w.Op("MatMul", {p, vh}, type);
  std::vector<Value*> outputs = {node->output(mha::kOutputY)};
  Value* weights = node->output(mha::kOutputProbabilities);
  if (three_d) {
    Value* merged = w.Transpose(y, {0, 2, 1, 3});
    graph.ReplaceNode(node, "Reshape", "", {merged, w.Ints({0, 0, heads * v_head_dim})}, outputs, {});
  } else {
    graph.ReplaceNode(node, "Identity", "", {y}, outputs, {});
  }
  if (weights != nullptr)
    graph.AddNode("Identity", "", graph.UniqueName(weights->name() + "/probabilities"), {p}, {weights});
  return "";
}

}  // namespace attune
