// Query heads folded into the query axis are split back out. GPTBigCode's
// multi-query attention (StarCoder, SantaCoder) has one K/V head and views the
// (B, T, H*D) query as (B, T*H, D), so that one bmm against the key serves
// every head; the scores come back viewed (B, T, H, S), heads after the query
// axis, for the mask:
//
//   Q3 (B, T*H, D) ─ MatMul(K (B, D, S)) ─ [scale] ─ Reshape(-> B,T,H,S) ─ Where(mask (B,T,1,S), ·, min)
//     ─ Softmax ─ Reshape(-> B,T*H,S) ─ MatMul(V (B, S, D)) -> (B, T*H, D)
//
// This pass computes the same block on (B, H, T, ·) heads, the layout the
// attention patterns read:
//
//   Q4 = Transpose(Reshape(Q3, [0, -1, H, D]), 0,2,1,3)          (B, H, T, D)
//   S4 = MatMul(Q4, Unsqueeze(K, 1)) [scale]                      (B, H, T, S)
//   each op of the score chain on S4, its other operands viewed by the same
//     permutation (Unsqueezed to rank 4, Transpose 0,2,1,3)
//   O4 = MatMul(P4, Unsqueeze(V, 1))                              (B, H, T, D)
//   O3 = Reshape(Transpose(O4, 0,2,1,3), (B, T*H) of Q3's shape, D)  (B, T*H, D)
//
// It is a relabelling of elements, exact for every value, NaN and Inf
// included: element (b, t*H + h, ·) of a folded tensor is element
// (b, h, t, ·) of the 4-D one, a product of (B, T*H, D) by (B, D, S) computes
// each row from that row of Q alone, and every op of the chain is element-wise
// (Softmax over the last axis, which the permutation keeps last), so it
// computes element (b, t, h, s) from the elements at the same place of its
// broadcast operands, which are viewed by the same permutation. What the
// shapes prove: the score view keeps the batch and the key count and splits
// T*H with H static (so by its element count T*H is the query rows, H the
// inner factor), the probabilities' view back keeps the batch, and Q's and
// V's head dims are static; each value of the chain is read by the chain
// alone and is no graph output. What they do not prove is checked on the new
// layout at run time, as the original views checked it: the view back's key
// count, a baddbmm base's shape, and the context's rows (taken from Q3's
// shape). Otherwise the graph is left as it is, and a block that has the
// folded form but a chain this pass cannot carry is reported with the op
// that stopped it.
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/passes/graph_edits.h"
#include "engine/passes/passes.h"
#include "engine/passes/symbolic_dim.h"

namespace attune {
namespace {

constexpr std::string_view kPassName = "unfold_query_heads";

const SymbolicShape* ShapeOfRank(const Value* v, size_t rank) {
  if (v == nullptr || !v->shape() || v->shape()->size() != rank) return nullptr;
  return &*v->shape();
}

bool IsOp(const Node* n, std::string_view op) { return n != nullptr && n->domain().empty() && n->op_type() == op; }

bool ReadOnceInside(const Value* v) { return v->uses().size() == 1 && !v->is_graph_output(); }

bool IsOne(const Dim& d) { return d.is_known() && d.value() == 1; }

// `x` can be an operand of an element-wise op of the 4-D scores: rank <= 4.
// Broadcasting is the same along each axis whatever their order, so the
// permuted operand broadcasts against the permuted scores as `x` did against
// the scores, failing alike; a dim that grows the scores (the scores' 1
// against more) fails the context's view back, whose dims the rewrite takes
// from the query, as it failed the view the block wrote.
bool BroadcastsInto(const Value* x, const SymbolicShape& result) {
  if (x == nullptr || !x->shape() || x->shape()->size() > result.size()) return false;
  const SymbolicShape& xs = *x->shape();
  const size_t offset = result.size() - xs.size();
  for (size_t i = 0; i < xs.size(); ++i) {
    const Dim& r = result[offset + i];
    // Two static dims that differ, neither 1: the block never runs; left alone.
    if (xs[i].is_known() && r.is_known() && xs[i].value() != r.value() && xs[i].value() != 1 && r.value() != 1)
      return false;
  }
  return true;
}

std::string ShapeText(const Value* x) {
  return x->shape() ? SymbolicShapeToString(*x->shape()) : std::string("(no rank)");
}

// A 3-D ConstantOfShape: one value everywhere, so its (B, T*H, S) view is
// (B, T, H, S) whatever the order of the axes.
bool IsUniformFold(const Value* x) {
  return x->shape() && x->shape()->size() == 3 && IsOp(x->producer(), "ConstantOfShape");
}

bool IsElementwise(const std::string& op) {
  static const std::vector<std::string_view> kOps = {
      "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Where", "Cast", "Identity", "Neg", "Tanh", "Dropout"};
  for (std::string_view k : kOps)
    if (op == k) return true;
  return false;
}

// One op of the chain: `chain_input` is the index of the input that carries
// the scores; the others broadcast.
struct Step {
  Node* node;
  int chain_input;
};

// The block one P.V product closes, found from that product back to the
// score product.
struct Block {
  Node* context = nullptr;      // MatMul(P3, V) -> (B, T*H, Dv)
  Node* score = nullptr;        // MatMul(Q3, K) -> (B, T*H, S)
  Node* score_view = nullptr;   // Reshape (B, T*H, S) -> (B, T, H, S)
  Node* probs_view = nullptr;   // Reshape (B, T, H, S) -> (B, T*H, S)
  bool check_keys = false;      // the view's key count is not proven the probabilities'
  std::vector<Step> scale;      // on the 3-D scores, operand-before-user order
  std::vector<Step> chain;      // on the 4-D scores, operand-before-user order
  int64_t heads = 0;
  int64_t q_head_dim = 0;
  int64_t v_head_dim = 0;
};

bool StaticPositive(const Dim& d) { return d.is_known() && d.value() > 0; }

// A Reshape of (B, M, S) to (B, T, H, S), H static: by the element count,
// T*H = M with H the inner factor (the query's heads follow its positions).
bool IsScoreView(const Node* p, int64_t heads) {
  if (!IsOp(p, "Reshape") || p->num_outputs() != 1) return false;
  const SymbolicShape* in = ShapeOfRank(p->input(0), 3);
  const SymbolicShape* out = ShapeOfRank(p->output(0), 4);
  return in != nullptr && out != nullptr && StaticPositive((*out)[2]) &&
         (heads == 0 || (*out)[2].value() == heads) && (*in)[0] == (*out)[0] && (*in)[2] == (*out)[3];
}

class Finder {
 public:
  explicit Finder(const Graph& graph) : graph_(graph) {}

  // The folded block `context` closes, or nullopt; `reason` is set when the
  // folded form is there but the block cannot be carried.
  std::optional<Block> Find(Node* context) {
    reason_.clear();
    if (!IsOp(context, "MatMul") || context->num_inputs() != 2 || context->num_outputs() != 1) return std::nullopt;
    const SymbolicShape* p3 = ShapeOfRank(context->input(0), 3);
    if (p3 == nullptr || ShapeOfRank(context->output(0), 3) == nullptr || !ReadOnceInside(context->input(0)))
      return std::nullopt;
    // The probabilities' view back: (B, T, H, S) -> (B, T*H, S'), H static.
    Node* p_view = context->input(0)->producer();
    if (!IsOp(p_view, "Reshape") || p_view->num_inputs() != 2) return std::nullopt;
    Value* probabilities = p_view->input(0);
    const SymbolicShape* p4 = ShapeOfRank(probabilities, 4);
    if (p4 == nullptr || !StaticPositive((*p4)[2]) || !((*p4)[0] == (*p3)[0])) return std::nullopt;
    Block block;
    block.context = context;
    block.probs_view = p_view;
    block.heads = (*p4)[2].value();
    // Its key count, where not proven the probabilities', is checked at run
    // time (a view to that count on the 4-D probabilities).
    block.check_keys = !((*p4)[3] == (*p3)[2]);
    if (block.check_keys) {
      const SymbolicShape* target = ShapeOfRank(p_view->input(1), 1);
      if (target == nullptr || !(*target)[0].is_known() || (*target)[0].value() != 3 ||
          p_view->input(1)->type() != ElementType::kInt64)
        return std::nullopt;
    }
    // The chain, from the probabilities back to the score view.
    Value* v = probabilities;
    if (!ReachesScoreView(v, block.heads, kMaxChain)) return std::nullopt;
    // From here on the folded form is there: every refusal is reported.
    if (!ReadOnceInside(v)) return Refuse(v, "(the probabilities) is read outside the block");
    while (true) {
      Node* p = v->producer();
      if (IsScoreView(p, block.heads) && p->output(0) == v) {
        block.score_view = p;
        break;
      }
      auto step = ChainStep(*p, v, block.heads);
      if (!step) return std::nullopt;
      block.chain.insert(block.chain.begin(), *step);
      v = p->input(step->chain_input);
      if (!ReadOnceInside(v)) return Refuse(v, "is read outside the block");
    }
    if (!OneHeadOperand(context->input(1), /*keys_first=*/true, &block.v_head_dim))
      return Refuse(context->input(1),
                    absl::StrCat(ShapeText(context->input(1)), " is not one value head (B, S, Dv) with Dv static"));
    // The 3-D scale steps, from the score view back to the score product.
    Value* s = block.score_view->input(0);
    if (!ReadOnceInside(s)) return Refuse(s, "is read outside the block");
    while (true) {
      Node* p = s->producer();
      if (p == nullptr) return Refuse(s, "is not a product of the query and the key");
      if (IsOp(p, "MatMul") && p->num_inputs() == 2 && p->output(0) == s) {
        block.score = p;
        break;
      }
      auto step = ScaleStep(*p, s);
      if (!step) return Refuse(s, absl::StrCat("is computed by '", p->name(), "' (", p->op_type(),
                                                  "), not a scale of the scores"));
      block.scale.insert(block.scale.begin(), *step);
      s = p->input(step->chain_input);
      if (!ReadOnceInside(s)) return Refuse(s, "is read outside the block");
    }
    const SymbolicShape* q3 = ShapeOfRank(block.score->input(0), 3);
    if (q3 == nullptr || !StaticPositive((*q3)[2]))
      return Refuse(block.score->input(0),
                    absl::StrCat(ShapeText(block.score->input(0)), " is not the query (B, T*H, D) with D static"));
    block.q_head_dim = (*q3)[2].value();
    int64_t k_rows = 0;
    if (!OneHeadOperand(block.score->input(1), /*keys_first=*/false, &k_rows))
      return Refuse(block.score->input(1),
                    absl::StrCat(ShapeText(block.score->input(1)), " is not one key head (B, D, S)"));
    return block;
  }

  const std::string& reason() const { return reason_; }

 private:
  static constexpr int kMaxChain = 256;

  // One K or V head shared by every query head: (B or 1, S, D) for V, (B or
  // 1, D, S) for K, or the 2-D (S, D) / (D, S); `dim` gets D (static). The
  // products check the rest as they did: the new ones broadcast the batch
  // and contract the same dims, so they fail where the folded ones failed.
  static bool OneHeadOperand(const Value* x, bool keys_first, int64_t* dim) {
    if (x == nullptr || !x->shape()) return false;
    const SymbolicShape& s = *x->shape();
    if (s.size() != 2 && s.size() != 3) return false;
    const Dim& head_dim = s[s.size() - (keys_first ? 1 : 2)];
    if (!StaticPositive(head_dim)) return false;
    *dim = head_dim.value();
    return true;
  }

  // `p` computes `v` (the 4-D scores) element-wise from one input on the
  // path from the score view and operands that broadcast into it.
  std::optional<Step> ChainStep(const Node& p, const Value* v, int64_t heads) {
    if (!p.domain().empty() || p.output(0) != v) return RefuseStep(p, "is not an op of the scores");
    const std::string& op = p.op_type();
    if (op == "Softmax" || op == "LogSoftmax") {
      const int64_t default_axis = graph_.OpsetFor("") >= 13 ? -1 : 1;
      auto axis = p.attributes().GetInt("axis", default_axis);
      if (!axis.ok() || (*axis != -1 && *axis != 3)) return RefuseStep(p, "is not over the last axis");
    } else if (!IsElementwise(op)) {
      return RefuseStep(p, "is not element-wise");
    }
    for (int i = 1; i < p.num_outputs(); ++i)
      if (p.output(i) != nullptr && (!p.output(i)->uses().empty() || p.output(i)->is_graph_output()))
        return RefuseStep(p, "has a second output that is read");
    int chain_input = -1;
    for (int i = 0; i < p.num_inputs(); ++i) {
      const Value* x = p.input(i);
      if (x == nullptr) continue;
      if (chain_input < 0 && ShapeOfRank(x, 4) != nullptr && ReachesScoreView(x, heads, kMaxChain)) {
        chain_input = i;
      } else if (!BroadcastsInto(x, *v->shape())) {
        return RefuseStep(p, absl::StrCat("has operand '", x->name(), "' ", ShapeText(x),
                                          ", which does not broadcast into the scores ", ShapeText(v)));
      }
    }
    if (chain_input < 0) return RefuseStep(p, "reads no input computed from the scores");
    return Step{const_cast<Node*>(&p), chain_input};
  }

  // Whether `v` is the score view's output or computed from it through
  // rank-4 values, looking at no more than `budget` values (a bound that
  // keeps a graph of many shared paths linear).
  static bool ReachesScoreView(const Value* v, int64_t heads, int budget) {
    std::vector<const Value*> pending = {v};
    std::unordered_set<const Value*> seen = {v};
    while (!pending.empty() && budget-- > 0) {
      const Node* p = pending.back()->producer();
      pending.pop_back();
      if (p == nullptr) continue;
      if (IsScoreView(p, heads)) return true;
      for (int i = 0; i < p->num_inputs(); ++i) {
        const Value* x = p->input(i);
        if (x != nullptr && ShapeOfRank(x, 4) != nullptr && seen.insert(x).second) pending.push_back(x);
      }
    }
    return false;
  }

  // A scale of the 3-D scores: an element-wise op of them (rank 3) and
  // operands whose every dim is 1, or a (B, T*H, S) tensor of one value
  // (ConstantOfShape).
  static std::optional<Step> ScaleStep(const Node& p, const Value* s) {
    if (!p.domain().empty() || p.output(0) != s || p.num_outputs() != 1) return std::nullopt;
    const std::string& op = p.op_type();
    if (op != "Mul" && op != "Div" && op != "Add" && op != "Sub" && op != "Cast" && op != "Identity")
      return std::nullopt;
    int chain_input = -1, uniform = -1;
    for (int i = 0; i < p.num_inputs(); ++i) {
      const Value* x = p.input(i);
      if (x == nullptr || !x->shape()) return std::nullopt;
      bool all_ones = x->shape()->size() <= 3;
      for (const Dim& d : *x->shape()) all_ones = all_ones && IsOne(d);
      if (all_ones) continue;
      if (x->shape()->size() != 3) return std::nullopt;
      if (IsUniformFold(x)) {
        uniform = i;
        continue;
      }
      if (chain_input >= 0) return std::nullopt;
      chain_input = i;
    }
    // torch.baddbmm(zeros(B, T*H, S), q, k, beta=1) on the CPU: the base's
    // shape is not always proven the scores', so it is computed in the new
    // layout too (its view there is checked at run time).
    if (chain_input < 0 && uniform >= 0 && p.num_inputs() == 1) chain_input = uniform;
    // (Div and Sub keep their operand order: a scalar divided by the scores
    // is element-wise too.)
    if (chain_input < 0) return std::nullopt;
    return Step{const_cast<Node*>(&p), chain_input};
  }

  std::nullopt_t Refuse(const Value* v, const std::string& what) {
    reason_ = absl::StrCat("'", v->name(), "' ", what);
    return std::nullopt;
  }
  std::nullopt_t RefuseStep(const Node& p, const std::string& what) {
    reason_ = absl::StrCat("'", p.name(), "' (", p.op_type(), ") between the score view and P.V ", what);
    return std::nullopt;
  }

  const Graph& graph_;
  std::string reason_;
};

class Builder {
 public:
  Builder(Graph& graph, const Block& block) : graph_(graph), block_(block) {}

  // Adds the 4-D block; returns the (B, T*H, Dv) value that replaces the
  // context's output.
  Value* Build() {
    const SymbolicShape& split = *block_.score_view->output(0)->shape();  // (B, T, H, S)
    const Dim batch = split[0], queries = split[1], heads = split[2], keys = split[3];
    base_ = block_.context->name();

    Value* q3 = block_.score->input(0);
    Value* q_split = Reshape(q3, {0, -1, block_.heads, block_.q_head_dim},
                             {batch, queries, heads, Dim::Known(block_.q_head_dim)});
    Value* q4 = Transpose(q_split, {0, 2, 1, 3});
    Value* k4 = HeadAxis(block_.score->input(1));
    Value* scores = Emit(block_.score->op_type(), {q4, k4}, {batch, heads, queries, keys}, q3->type(),
                         block_.score->attributes(), block_.score->name());
    for (const Step& step : block_.scale) scores = Redo(step, scores, /*permute_operands=*/false);
    Value* product = scores;
    // The key check goes before the softmax, where the attention patterns
    // read a view of the scores as a mask step; the softmax keeps the shape,
    // so it checks the same count there.
    bool checked = !block_.check_keys;
    for (const Step& step : block_.chain) {
      const std::string& op = step.node->op_type();
      if (!checked && (op == "Softmax" || op == "LogSoftmax")) {
        scores = ViewedToKeys(scores, product);
        checked = true;
      }
      scores = Redo(step, scores, /*permute_operands=*/true);
    }
    if (!checked) scores = ViewedToKeys(scores, product);
    Value* v4 = HeadAxis(block_.context->input(1));
    Value* context = block_.context->output(0);
    const SymbolicShape& p = *scores->shape();
    Value* o4 = Emit("MatMul", {scores, v4}, {p[0], p[1], p[2], Dim::Known(block_.v_head_dim)}, context->type(),
                     block_.context->attributes(), block_.context->name());
    Value* o_split = Transpose(o4, {0, 2, 1, 3});
    return Emit("Reshape", {o_split, ContextShape(q3)}, *context->shape(), context->type(), {}, base_);
  }

 private:
  // The 4-D op of a step: the original's type, its shape in the new layout
  // (the 3-D scale steps: the lifted scores').
  Value* Redo(const Step& step, Value* lifted, bool permute_operands) {
    Node* n = step.node;
    std::vector<Value*> inputs;
    for (int i = 0; i < n->num_inputs(); ++i) {
      Value* x = n->input(i);
      if (i == step.chain_input) {
        inputs.push_back(lifted);
      } else if (x != nullptr && !permute_operands && IsUniformFold(x)) {
        inputs.push_back(Unfolded(x));
      } else if (x == nullptr || !permute_operands) {
        inputs.push_back(x);
      } else {
        inputs.push_back(Permuted(x));
      }
    }
    Attributes attrs = n->attributes();
    if (n->op_type() == "Softmax" || n->op_type() == "LogSoftmax") attrs.Set("axis", int64_t{-1});
    SymbolicShape shape = *lifted->shape();
    if (permute_operands) {
      const SymbolicShape& s = *n->output(0)->shape();
      shape = SymbolicShape{s[0], s[2], s[1], s[3]};
    }
    return Emit(n->op_type(), std::move(inputs), std::move(shape), n->output(0)->type(), std::move(attrs),
                n->name());
  }

  // Reshape(scores, [0, 0, T, y]), T the product's query count and y the
  // probabilities' view back's key count, both read at run time: the check of
  // the keys that view made, and of a mask operand that would grow the query
  // axis (the scores' 1 against more), which the view's element count made.
  Value* ViewedToKeys(Value* scores, Value* product) {
    Value* target = block_.probs_view->input(1);
    Value* at = graph_.AddConstant(base_ + "_key_index", Int64Vector({2}));
    Attributes gather;
    gather.Set("axis", int64_t{0});
    Value* keys = Emit("Gather", {target, at}, SymbolicShape{Dim::Known(1)}, ElementType::kInt64, std::move(gather),
                       base_);
    Value* product_shape = Emit("Shape", {product}, SymbolicShape{Dim::Known(4)}, ElementType::kInt64, {}, base_);
    Value* copies = graph_.AddConstant(base_ + "_copies", Int64Vector({0, 0}));
    Value* view = Concat({copies, SliceOf(product_shape, 2, 3), keys});
    const SymbolicShape& s = *scores->shape();
    const SymbolicShape& viewed = *block_.probs_view->output(0)->shape();
    return Emit("Reshape", {scores, view}, SymbolicShape{s[0], s[1], (*product->shape())[2], viewed[2]},
                scores->type(), {}, base_);
  }

  // An operand of the (B, T, H, S) chain in the (B, H, T, S) layout. Aligned
  // at the last axis, an operand of rank <= 1, or whose axes 1 and 2 (once
  // padded to rank 4) are both 1, is the same elements in either layout.
  Value* Permuted(Value* x) {
    const SymbolicShape& s = *x->shape();
    if (s.size() <= 1) return x;
    SymbolicShape padded(4 - s.size(), Dim::Known(1));
    padded.insert(padded.end(), s.begin(), s.end());
    if (IsOne(padded[1]) && IsOne(padded[2])) return x;
    Value* x4 = x;
    if (s.size() < 4) {
      std::vector<int64_t> axes;
      for (size_t i = 0; i < 4 - s.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      x4 = Unsqueeze(x, axes, padded);
    }
    return Transpose(x4, {0, 2, 1, 3});
  }

  // (B, T*H, Dv): the query's first two dims, read at run time, and V's
  // head dim.
  Value* ContextShape(Value* q3) {
    Value* shape = Emit("Shape", {q3}, SymbolicShape{Dim::Known(3)}, ElementType::kInt64, {}, base_);
    Value* head_dim = graph_.AddConstant(base_ + "_head_dim", Int64Vector({block_.v_head_dim}));
    return Concat({SliceOf(shape, 0, 2), head_dim});
  }

  // A (B, T*H, S) tensor of one value viewed (B, T, H, S) and permuted: the
  // view's dims read from its shape at run time (a view that fails is the
  // broadcast against the scores that failed).
  Value* Unfolded(Value* x) {
    const SymbolicShape& s = *x->shape();
    Value* shape = Emit("Shape", {x}, SymbolicShape{Dim::Known(3)}, ElementType::kInt64, {}, base_);
    Value* split = graph_.AddConstant(base_ + "_split", Int64Vector({-1, block_.heads}));
    Value* target = Concat({SliceOf(shape, 0, 1), split, SliceOf(shape, 2, 3)});
    Value* viewed = Emit("Reshape", {x, target}, SymbolicShape{s[0], Dim(), Dim::Known(block_.heads), s[2]}, x->type(),
                         {}, base_);
    return Transpose(viewed, {0, 2, 1, 3});
  }

  Value* SliceOf(Value* shape, int64_t start, int64_t end) {
    const SymbolicShape out{Dim::Known(end - start)};
    if (graph_.OpsetFor("") >= 10) {
      Value* starts = graph_.AddConstant(base_ + "_starts", Int64Vector({start}));
      Value* ends = graph_.AddConstant(base_ + "_ends", Int64Vector({end}));
      return Emit("Slice", {shape, starts, ends}, out, ElementType::kInt64, {}, base_);
    }
    Attributes attrs;
    attrs.Set("starts", std::vector<int64_t>{start});
    attrs.Set("ends", std::vector<int64_t>{end});
    attrs.Set("axes", std::vector<int64_t>{0});
    return Emit("Slice", {shape}, out, ElementType::kInt64, std::move(attrs), base_);
  }

  Value* Concat(std::vector<Value*> parts) {
    int64_t n = 0;
    for (const Value* v : parts) n += (*v->shape())[0].value();
    Attributes attrs;
    attrs.Set("axis", int64_t{0});
    return Emit("Concat", std::move(parts), SymbolicShape{Dim::Known(n)}, ElementType::kInt64, std::move(attrs), base_);
  }

  // A shared K or V head given the head axis: (B, S, D) -> (B, 1, S, D); a
  // 2-D operand broadcasts as it is.
  Value* HeadAxis(Value* x) {
    const SymbolicShape& s = *x->shape();
    if (s.size() == 2) return x;
    return Unsqueeze(x, {1}, SymbolicShape{s[0], Dim::Known(1), s[1], s[2]});
  }

  Value* Unsqueeze(Value* x, const std::vector<int64_t>& axes, SymbolicShape shape) {
    if (graph_.OpsetFor("") >= 13) {
      Value* axes_value = graph_.AddConstant(base_ + "_axes", Int64Vector(axes));
      return Emit("Unsqueeze", {x, axes_value}, std::move(shape), x->type(), {}, base_);
    }
    Attributes attrs;
    attrs.Set("axes", axes);
    return Emit("Unsqueeze", {x}, std::move(shape), x->type(), std::move(attrs), base_);
  }

  Value* Transpose(Value* x, const std::vector<int64_t>& perm) {
    const SymbolicShape& s = *x->shape();
    SymbolicShape shape;
    for (int64_t p : perm) shape.push_back(s[p]);
    Attributes attrs;
    attrs.Set("perm", perm);
    return Emit("Transpose", {x}, std::move(shape), x->type(), std::move(attrs), base_);
  }

  // Reshape(x, target) with allowzero 0: a 0 copies the input's dim (the
  // batch, the same in both forms), -1 takes the rest.
  Value* Reshape(Value* x, const std::vector<int64_t>& target, SymbolicShape shape) {
    Value* target_value = graph_.AddConstant(base_ + "_shape", Int64Vector(target));
    return Emit("Reshape", {x, target_value}, std::move(shape), x->type(), {}, base_);
  }

  Value* Emit(const std::string& op, std::vector<Value*> inputs, SymbolicShape shape, ElementType type,
             Attributes attrs, const std::string& name) {
    const std::string unique = graph_.UniqueName(name + "/unfolded");
    Value* out = graph_.AddValue(unique, type, std::move(shape));
    graph_.AddNode(op, "", unique, std::move(inputs), {out}, std::move(attrs));
    return out;
  }

  Graph& graph_;
  const Block& block_;
  std::string base_;
};

class UnfoldQueryHeadsPass final : public Pass {
 public:
  std::string_view name() const override { return kPassName; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    bool changed = false;
    Finder finder(graph);
    std::vector<Node*> products;
    for (Node* n : graph.nodes())
      if (IsOp(n, "MatMul")) products.push_back(n);
    for (Node* product : products) {
      auto block = finder.Find(product);
      if (!block) {
        if (!finder.reason().empty()) Report(context, product->name(), finder.reason());
        continue;
      }
      Value* result = Builder(graph, *block).Build();
      ReplaceOutputWith(graph, product, result);
      changed = true;
    }
    if (changed) graph.RemoveDeadNodes();
    return changed;
  }

 private:
  static void Report(PassContext& context, const std::string& at, const std::string& reason) {
    AddRejection(context.report, RejectedCandidate{at, std::string(kPassName), reason});
  }
};

}  // namespace

std::unique_ptr<Pass> MakeUnfoldQueryHeadsPass() { return std::make_unique<UnfoldQueryHeadsPass>(); }

}  // namespace attune
