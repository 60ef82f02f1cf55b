#include "importer/gqa_export.h"

#include <cmath>
#include <string_view>

#include "core/schema/multi_head_attention.h"

namespace attune {
namespace {

constexpr char kMsDomain[] = "com.microsoft";

bool Is(const Node* n, std::string_view domain, std::string_view op) {
  return n != nullptr && n->domain() == domain && n->op_type() == op;
}

// The pieces of one lowered GroupQueryAttention, read back from its nodes.
struct LoweredGqa {
  const Node* positions = nullptr;  // attune.GroupQueryPositions
  const Node* q_rotary = nullptr;   // com.microsoft.RotaryEmbedding of Q, or null
  const Node* k_rotary = nullptr;
  Value* query = nullptr;           // Q, K before the rotary embedding
  Value* key = nullptr;
};

// The rotary embedding of `x` at the positions `positions` gives, or null.
const Node* RotaryAt(const Value* x, const Node* positions) {
  const Node* r = x->producer();
  if (!Is(r, kMsDomain, "RotaryEmbedding") || r->num_inputs() != 4) return nullptr;
  return r->input(1) == positions->output(1) ? r : nullptr;
}

bool SameRotaryTables(const Node& a, const Node& b) {
  return a.input(2) == b.input(2) && a.input(3) == b.input(3) &&
         a.attributes().GetInt("interleaved", 0).value_or(-1) == b.attributes().GetInt("interleaved", 0).value_or(-2);
}

// Only the attributes the lowering writes, with a causal mask and no other mask.
bool HasLoweredAttributes(const Node& mha) {
  for (const auto& [name, value] : mha.attributes().all())
    if (name != mha::kNumHeads && name != mha::kKvNumHeads && name != mha::kCausal && name != mha::kScale &&
        name != mha::kSoftcap && name != mha::kWindow)
      return false;
  if (mha.attributes().GetInt(mha::kCausal, 0).value_or(0) != 1) return false;
  if (mha.attributes().GetInt(mha::kNumHeads, 0).value_or(0) <= 0) return false;
  for (int i : {mha::kInputMask, mha::kInputKeyPadding})
    if (i < mha.num_inputs() && mha.input(i) != nullptr) return false;
  const bool past_key = mha.num_inputs() > mha::kInputPastKey && mha.input(mha::kInputPastKey) != nullptr;
  const bool past_value = mha.num_inputs() > mha::kInputPastValue && mha.input(mha::kInputPastValue) != nullptr;
  return past_key == past_value && mha.num_outputs() == 3;
}

bool Read(const Node& mha, LoweredGqa* out) {
  if (!mha::IsMultiHeadAttention(mha) || !HasLoweredAttributes(mha)) return false;
  LoweredGqa g;
  Value* q = mha.input(mha::kInputQ);
  Value* k = mha.input(mha::kInputK);
  if (q == nullptr || k == nullptr || mha.input(mha::kInputV) == nullptr) return false;
  const Node* producer = q->producer();
  if (Is(producer, kMsDomain, "RotaryEmbedding")) {
    const Node* positions = producer->input(0) != nullptr ? producer->input(0)->producer() : nullptr;
    if (!Is(positions, mha::kDomain, "GroupQueryPositions") || producer->input(0) != positions->output(0)) return false;
    g.positions = positions;
    g.q_rotary = RotaryAt(q, positions);
    g.k_rotary = RotaryAt(k, positions);
    if (g.q_rotary == nullptr || g.k_rotary == nullptr || !SameRotaryTables(*g.q_rotary, *g.k_rotary)) return false;
    g.query = positions->input(0);  // the rotary reads Q through GroupQueryPositions' pass-through
    g.key = g.k_rotary->input(0);
  } else {
    if (!Is(producer, mha::kDomain, "GroupQueryPositions") || q != producer->output(0)) return false;
    g.positions = producer;
    g.query = producer->input(0);
    g.key = k;
  }
  // GroupQueryPositions(query, seqlens_k, total_sequence_length, Shape(past_key)?).
  if (g.positions->num_inputs() < 3 || g.positions->input(1) == nullptr || g.positions->input(2) == nullptr)
    return false;
  const bool past = mha.num_inputs() > mha::kInputPastKey && mha.input(mha::kInputPastKey) != nullptr;
  if (past != (g.positions->num_inputs() == 4)) return false;
  *out = g;
  return true;
}

// Whether `sinks` is a constant of zeros: the sinks smooth_softmax stands for.
bool AllZero(const Value* sinks) {
  const Tensor* t = sinks->constant();
  if (t == nullptr || t->type() != ElementType::kFloat32) return false;
  for (float x : t->values<float>())
    if (x != 0.0f || std::signbit(x)) return false;
  return true;
}

}  // namespace

bool IsLoweredGroupQueryAttention(const Node& mha) {
  LoweredGqa g;
  return Read(mha, &g);
}

void WriteGroupQueryAttentionBack(Graph& graph, const std::vector<std::string>& names) {
  bool any = false;
  for (const std::string& name : names) {
    Node* mha = graph.FindNode(name);
    LoweredGqa g;
    if (mha == nullptr || !Read(*mha, &g)) continue;
    const Attributes& m = mha->attributes();
    Attributes a;
    a.Set("num_heads", m.GetInt(mha::kNumHeads, 0).value_or(0));
    a.Set("kv_num_heads", m.GetInt(mha::kKvNumHeads, m.GetInt(mha::kNumHeads, 0).value_or(0)).value_or(0));
    if (m.Has(mha::kScale)) a.Set("scale", m.GetFloat(mha::kScale, 0.0f).value_or(0.0f));
    if (m.Has(mha::kSoftcap)) a.Set("softcap", m.GetFloat(mha::kSoftcap, 0.0f).value_or(0.0f));
    // attune's window counts the keys a query sees, as ONNX Runtime 1.30 reads local_window_size.
    if (const int64_t w = m.GetInt(mha::kWindow, 0).value_or(0); w > 0) a.Set("local_window_size", w);
    Value* past_key = mha->num_inputs() > mha::kInputPastKey ? mha->input(mha::kInputPastKey) : nullptr;
    Value* past_value = mha->num_inputs() > mha::kInputPastValue ? mha->input(mha::kInputPastValue) : nullptr;
    std::vector<Value*> in = {g.query, g.key, mha->input(mha::kInputV), past_key, past_value,
                              g.positions->input(1), g.positions->input(2)};
    if (g.q_rotary != nullptr) {
      a.Set("do_rotary", int64_t{1});
      a.Set("rotary_interleaved", g.q_rotary->attributes().GetInt("interleaved", 0).value_or(0));
      in.push_back(g.q_rotary->input(2));
      in.push_back(g.q_rotary->input(3));
    }
    Value* sinks = mha->num_inputs() > mha::kInputSinks ? mha->input(mha::kInputSinks) : nullptr;
    if (sinks != nullptr && AllZero(sinks)) {
      a.Set("smooth_softmax", int64_t{1});
    } else if (sinks != nullptr) {
      in.resize(12, nullptr);  // ..., position_ids, attention_bias, head_sink
      in[11] = sinks;
    }
    graph.ReplaceNode(mha, "GroupQueryAttention", kMsDomain, std::move(in), std::move(a));
    any = true;
  }
  if (!any) return;
  if (graph.OpsetFor(kMsDomain) <= 0) graph.SetOpset(kMsDomain, 1);
  graph.RemoveDeadNodes();
}

}  // namespace attune
