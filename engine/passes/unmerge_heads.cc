// Heads merged into the batch are split back out. Hugging Face OPT, BART,
// Whisper (and GPT-NeoX's baddbmm) view the (B, H, T, D) heads as (B*H, T, D),
// compute the scores and the context with torch.bmm on 3-D tensors, and view
// the results back to (B, H, ·, ·) for the mask or the output:
//
//   Reshape(Q4 -> B*H,T,D) ─┐
//   Reshape(K4 -> B*H,S,D) ─ Transpose(0,2,1) ─ MatMul ─ [Mul(alpha)] ─ Reshape(-> B,H,T,S)
//
// This pass finds each such view back (the split: a Reshape of a 3-D value to
// (B, H, x, y) with B*H its first dim) and the region of 3-D ops that feeds it
// from head merges (Reshapes of 4-D (B, H, x, y) values, the same B and H, to
// (B*H, x, y); or of a rank-3 (B, H, y) to (B*H, 1, y), BLOOM's ALiBi bias,
// whose 4-D form is Unsqueeze(·, 2)), and computes the region on the 4-D
// tensors instead: the attention patterns then see the (B, H, T, ·) form they
// read.
//
// It is a relabelling of elements, exact for every value, NaN and Inf
// included: element (b*H + h, x, y) of a merged tensor is element (b, h, x, y)
// of the 4-D one, and each op of a region computes element (i, x, y) from
// elements (i, ·, ·) of its operands only:
//   MatMul of two lifted operands (both merged from the same B, H: the batch
//     dims are equal in both forms, so it fails or succeeds alike);
//   Transpose of the last two axes (perm 0,2,1 -> 0,1,3,2);
//   Softmax / LogSoftmax over the last axis (axis -1 at every opset);
//   Cast, Identity, Dropout without its mask output;
//   Add, Sub, Mul, Div, Pow, Max, Min, Or, And of a lifted operand and either
//     another lifted operand or a value that broadcasts along the merged axis
//     (rank <= 3, first dim 1 when rank 3): a scale,
//     or a bias of shape (B*H, 1, S) merged from (B, H, 1, S), stays an op
//     of the 4-D scores and is never dropped.
// Every dim is proven by the symbolic shapes: (B, H) of each merge equals the
// split's, dim by dim (a merge of (H, B) against a split into (B, H) is left
// alone, and the fusion report says so; so is anything with an unknown dim),
// with one exception: a merge of (B, H, x, X) to (B*H, x, y) whose last dim X
// is not proven y (OPT's masked scores with a KV cache: the causal part's
// key length past + seq broadcast against the attention_mask's own length)
// becomes a Reshape of the 4-D value to (B, H, x, y): its first three dims
// copied, the merge's y. That view makes the check the merge made
// (B*H*x*X elements where B*H*x*y are wanted) and keeps every element where
// it was, whatever X is at run time, empty tensors included; the attention
// fusion reads it as a mask step.
// Every value the region computes is read by the region alone and is no graph
// output; otherwise the graph is left as it is. One exception: a Softmax's
// probabilities may also be viewed back to the region's (B, H, T, S)
// (nn.MultiheadAttention's need_weights=True); such a view reads the 4-D
// Softmax itself, which is the same elements. A merged value may have other
// readers (BLOOM's presents are its merged keys and values): the region reads
// its 4-D form and the merge stays for them. The split's output keeps its name
// when it is a graph output (it becomes an Identity of the 4-D result).
#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/passes/graph_edits.h"
#include "engine/passes/passes.h"
#include "engine/passes/symbolic_dim.h"
#include "engine/passes/unmerge_heads_views.h"
#include "engine/pattern/constants.h"

namespace attune {
namespace {

using unmerge_heads::AddTranspose;
using unmerge_heads::FindSequenceFirstView;
using unmerge_heads::Heads;
using unmerge_heads::IsOp;
using unmerge_heads::SeqFirstView;
using unmerge_heads::SequenceFirstHeads;
using unmerge_heads::SequenceFirstOutput;
using unmerge_heads::SequenceFirstSplitHeads;
using unmerge_heads::ShapeOfRank;

// Read by exactly one node input and not a graph output, not counting Shape
// nodes, which read no element: the 3-D value stays computed for them where
// they are still read (nn.MultiheadAttention's ConstantOfShape(Shape(mask))
// of zeros, which the region reads as its one value, so that nothing reads
// it then).
bool ReadOnceInsideBesidesShapes(const Value* v) {
  if (v->is_graph_output()) return false;
  int reads = 0;
  for (const Use& use : v->uses()) reads += !IsOp(use.node, "Shape");
  return reads == 1;
}

std::optional<Heads> SplitHeads(const Node& split);

// One 3-D op of a region, computed on 4-D operands. Steps are kept in
// operand-before-user order.
struct Step {
  Node* node;
  std::vector<bool> lifted;  // per input: read from the 4-D form
};

class RegionPlan {
 public:
  RegionPlan(const Graph& graph, Heads heads) : graph_(graph), heads_(std::move(heads)) {}

  // Plans `v` (3-D, read once by `reader`, inside the region) on its 4-D form.
  bool Lift(Value* v, const Node* reader) {
    const SymbolicShape* shape = ShapeOfRank(v, 3);
    if (shape == nullptr) return false;
    if (leaves_.contains(v) || planned_.contains(v)) return false;  // read twice: not once
    Node* p = v->producer();
    if (p == nullptr) return LiftPerHeadInput(v, *shape);
    if (!p->domain().empty() || p->num_outputs() < 1 || p->output(0) != v) return false;
    // BLOOM's KV cache: the merged past (a graph input of its own batch dim)
    // joined to the merged new keys or values; the result is the present.
    if (const Value* source = ConcatWithMerge(*p); source != nullptr) {
      leaves_[v] = Leaf{v, -1, nullptr, source};
      return true;
    }
    if (!((*shape)[0] == heads_.merged)) return false;
    // A merged value may have readers outside the region (BLOOM returns its
    // merged keys and values as the presents): the region reads its 4-D form,
    // and the merge stays for them.
    if (IsMerge(*p, *shape)) {
      leaves_[v] = Leaf{p->input(0), -1, nullptr};
      return true;
    }
    if (auto view = SequenceFirstView(*p, heads_); view) {
      leaves_[v] = Leaf{view->projection, -1, nullptr, nullptr, *view};
      return true;
    }
    if (IsMergeOfAnotherLength(*p, *shape)) {
      leaves_[v] = Leaf{p->input(0), -1, p};
      return true;
    }
    if (int axis = RowMergeAxis(*p, *shape); axis >= 0) {
      leaves_[v] = Leaf{p->input(0), axis, nullptr};
      return true;
    }
    NoteOtherOrder(*p, *shape);
    if (!ReadOnceInsideBesidesShapes(v) && !ViewedBackBesides(v, reader)) return false;  // computed for another reader: left whole
    std::vector<bool> lifted(p->num_inputs(), false);
    const std::string& op = p->op_type();
    if (op == "Softmax" || op == "LogSoftmax") {
      if (!LastAxis(*p)) return false;
      lifted[0] = true;
    } else if (op == "Transpose") {
      auto perm = p->attributes().GetInts("perm");
      if (!perm.ok() || *perm != std::vector<int64_t>{0, 2, 1}) return false;
      lifted[0] = true;
    } else if (op == "Cast" || op == "Identity") {
      lifted[0] = true;
    } else if (op == "Dropout") {
      for (int i = 1; i < p->num_outputs(); ++i)
        if (p->output(i) != nullptr && (!p->output(i)->uses().empty() || p->output(i)->is_graph_output()))
          return false;
      lifted[0] = true;
    } else if (op == "MatMul") {
      lifted = {true, true};
    } else if (IsBinaryElementwise(op) || op == "Where") {
      if (p->num_inputs() != (op == "Where" ? 3 : 2)) return false;
      std::vector<Value*> uniform;
      for (int i = 0; i < p->num_inputs(); ++i) {
        Value* x = p->input(i);
        const SymbolicShape* xs = ShapeOfRank(x, 3);
        if (xs != nullptr && (*xs)[0] == heads_.merged && OneValue(x).has_value()) {
          uniform.push_back(x);
        } else if (xs != nullptr && (*xs)[0] == heads_.merged) {
          lifted[i] = true;
        } else if (!BroadcastsAlongMerged(x, *shape)) {
          if (xs != nullptr) NoteNotMerged(*x, *xs);
          return false;
        }
      }
      if (std::find(lifted.begin(), lifted.end(), true) == lifted.end()) return false;
      // A tensor of one value (nn.MultiheadAttention's zeros of the padding's
      // shape) becomes that value, where a lifted operand alone has the result's shape.
      if (!uniform.empty()) {
        bool full = false;
        for (int i = 0; i < p->num_inputs(); ++i) full = full || (lifted[i] && *p->input(i)->shape() == *shape);
        if (!full) return false;
        for (Value* x : uniform) uniform_[x] = *OneValue(x);
      }
    } else {
      return false;
    }
    if (p->num_inputs() < 1 || p->num_inputs() != static_cast<int>(lifted.size())) return false;
    for (int i = 0; i < p->num_inputs(); ++i)
      if (lifted[i] && !Lift(p->input(i), p)) return false;
    planned_[v] = true;
    steps_.push_back(Step{p, std::move(lifted)});
    return true;
  }

  const std::vector<Step>& steps() const { return steps_; }
  // Views of a region's value back to this region's (B, H, x, y), besides
  // its reader inside: they read its 4-D form itself.
  const std::vector<std::pair<Node*, Value*>>& views_back() const { return views_back_; }
  // Set when a merge of the same B*H had its two axes in another order than
  // the split's: the one refusal the report names (it is what a swapped
  // view(H, B, ...) in a library's code looks like).
  const std::string& other_order() const { return other_order_; }
  // Set when a 3-D input merged with the heads was not viewed as (B, H, T, S).
  const std::string& per_head_input() const { return per_head_input_; }
  // A merged value's 4-D form: `input` itself, or Unsqueeze(input, axis) of a
  // rank-3 (B, H, y) merged to (B*H, 1, y) (axis 2) or (B*H, y, 1) (axis 3),
  // or (with `view_of`, the merge) `input` viewed to (B, H, x, y) where its
  // last dim is not proven y.
  // Or (with `heads_of`) a Concat's result viewed to (B, H, x, y) with the
  // B and H of `heads_of`, the 4-D source of one of its merged inputs.
  // Or (with `seq_first`) the sequence-first view of a projection.
  struct Leaf {
    Value* input;
    int unsqueeze_axis;
    const Node* view_of;
    const Value* heads_of = nullptr;
    std::optional<SeqFirstView> seq_first;
    bool per_head_input = false;  // a (B*H, x, y) input of known B and H, viewed as (B, H, x, y)
  };
  const std::unordered_map<Value*, Leaf>& leaves() const { return leaves_; }
  // Values of one repeated element, read as that element (a one-entry tensor).
  const std::unordered_map<Value*, Tensor>& uniform() const { return uniform_; }

 private:
  // The one element a ConstantOfShape (or a folded constant of one repeated
  // element) repeats, as a one-entry tensor of its type.
  static std::optional<Tensor> OneValue(const Value* x) {
    if (IsOp(x->producer(), "ConstantOfShape")) {
      absl::StatusOr<Tensor> value = x->producer()->attributes().GetTensor("value");
      if (!value.ok()) return Tensor::Scalar(0.0f);  // the op's default
      if (value->num_elements() != 1 || value->type() != x->type()) return std::nullopt;
      return *std::move(value);
    }
    // baddbmm's beta * buffer: a product of one-value float operands is one value.
    if (IsOp(x->producer(), "Mul") && x->type() == ElementType::kFloat32 && x->producer()->num_inputs() == 2) {
      std::optional<Tensor> a = OneValue(x->producer()->input(0));
      std::optional<Tensor> b = OneValue(x->producer()->input(1));
      if (!a || !b || a->type() != ElementType::kFloat32 || b->type() != ElementType::kFloat32) return std::nullopt;
      return Tensor::Scalar(a->data<float>()[0] * b->data<float>()[0]);
    }
    const Tensor* t = pattern::ConstantOf(x);
    if (t == nullptr || t->num_elements() < 1 || !pattern::UniformValue(*t)) return std::nullopt;
    absl::StatusOr<Tensor> one = Tensor::Create(t->type(), {1});
    if (!one.ok()) return std::nullopt;
    std::memcpy(one->raw_data(), t->raw_data(), ElementSize(t->type()));
    return *std::move(one);
  }

  // nn.MultiheadAttention's 3-D attn_mask, an input of (B*H, T, S): one mask
  // per batch and head. It is viewed as (B, H, T, S) where its first dim is
  // proven B*H with B and H known (the view then succeeds exactly where the
  // 3-D ops did); a first dim not proven B*H (a symbol of its own, which the
  // 3-D Add would also broadcast from 1) is left alone, with its reason.
  bool LiftPerHeadInput(Value* v, const SymbolicShape& shape) {
    if (!(shape[0] == heads_.merged)) {
      if (!(shape[0].is_known() && shape[0].value() == 1)) NoteNotMerged(*v, shape);
      return false;
    }
    if (!heads_.batch.is_known() || !heads_.heads.is_known()) {
      if (per_head_input_.empty())
        per_head_input_ = absl::StrCat("'", v->name(), "' (", SymbolicShapeToString(shape),
                                       ") is a mask per head, (B*H, T, S), with B or H not known: its view as ",
                                       "(B, H, T, S) is not written");
      return false;
    }
    if (!ReadOnceInsideBesidesShapes(v)) return false;
    leaves_[v] = Leaf{v, -1, nullptr};
    leaves_[v].per_head_input = true;
    return true;
  }

  // A (X, T, S) operand of the merged ops whose X is neither 1 nor proven
  // B*H: the 3-D op broadcasts it from 1 or takes it per batch and head, and
  // which of the two it is (and so its view as (B, H, T, S)) is not proven.
  void NoteNotMerged(const Value& v, const SymbolicShape& shape) {
    if (!per_head_input_.empty()) return;
    per_head_input_ = absl::StrCat("'", v.name(), "' (", SymbolicShapeToString(shape),
                                   ") is merged with the heads as (B*H, T, S), its first dim not provably ",
                                   heads_.merged.ToString(), " (B*H) or 1: a mask per head that is not viewed as ",
                                   "(B, H, T, S)");
  }

  // The probabilities of nn.MultiheadAttention with need_weights=True: the
  // Softmax's (B*H, T, S) is read by P·V inside the region and viewed as
  // (B, H, T, S) for the weights the module returns. Each such view (a split
  // of this region's B and H, proven as the region's own) is the 4-D Softmax
  // itself; any other reader leaves the region whole.
  bool ViewedBackBesides(Value* v, const Node* reader) {
    if (v->is_graph_output() || !IsOp(v->producer(), "Softmax")) return false;
    int inside = 0;
    std::vector<std::pair<Node*, Value*>> views;
    for (const Use& use : v->uses()) {
      if (use.node == reader && use.index == 0 && inside++ == 0) continue;
      auto heads = use.node->num_outputs() == 1 ? SplitHeads(*use.node) : std::nullopt;
      if (!heads || !(heads->batch == heads_.batch) || !(heads->heads == heads_.heads)) return false;
      views.emplace_back(use.node, v);
    }
    if (inside != 1 || views.empty()) return false;
    views_back_.insert(views_back_.end(), views.begin(), views.end());
    return true;
  }

  static bool IsBinaryElementwise(const std::string& op) {
    return op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" || op == "Max" || op == "Min" ||
           op == "Or" || op == "And";
  }

  // `merge` is a Reshape of a 4-D (B, H, x, y) value, this region's B and H,
  // to `shape` = (B*H, x, y).
  bool IsMerge(const Node& merge, const SymbolicShape& shape) const {
    if (merge.op_type() != "Reshape") return false;
    const SymbolicShape* in = ShapeOfRank(merge.input(0), 4);
    return in != nullptr && (*in)[0] == heads_.batch && (*in)[1] == heads_.heads && (*in)[2] == shape[1] &&
           (*in)[3] == shape[2];
  }

  // A sequence-first head view of this region's B and H.
  static std::optional<SeqFirstView> SequenceFirstView(const Node& p, const Heads& heads) {
    auto view = FindSequenceFirstView(p);
    if (!view || !(view->batch == heads.batch) || !(Dim::Known(view->heads) == heads.heads)) return std::nullopt;
    return view;
  }

  // As IsMerge, with the input's last dim not proven the merge's: (B, H, x, X)
  // to (B*H, x, y), the target read at run time (three dims: the merge's rank).
  bool IsMergeOfAnotherLength(const Node& merge, const SymbolicShape& shape) const {
    if (merge.op_type() != "Reshape" || merge.num_inputs() != 2 || merge.input(1) == nullptr) return false;
    const SymbolicShape* in = ShapeOfRank(merge.input(0), 4);
    const SymbolicShape* target = ShapeOfRank(merge.input(1), 1);
    return in != nullptr && target != nullptr && (*target)[0].is_known() && (*target)[0].value() == 3 &&
           merge.input(1)->type() == ElementType::kInt64 && (*in)[0] == heads_.batch && (*in)[1] == heads_.heads &&
           (*in)[2] == shape[1] && !shape[2].is_unknown() && !((*in)[3] == shape[2]);
  }

  // A Concat of 3-D values on axis 1 or 2 of which one is a merge of this
  // region's (B, H): the 4-D source of that merge, else null. Viewing the
  // Concat's result as (B, H, x, y) is exact however the other inputs were
  // made: the Concat succeeded only if every input has the merge's first dim
  // B*H, so the view relabels its elements, empty ones included, and where
  // the Concat fails the view is never reached. The Concat itself stays (it
  // is BLOOM's present), so a past of another batch still fails there.
  const Value* ConcatWithMerge(const Node& concat) const {
    if (concat.op_type() != "Concat" || graph_.OpsetFor("") < 14) return nullptr;  // the view needs allowzero
    auto axis = concat.attributes().GetInt("axis");
    if (!axis.ok() || !(*axis == 1 || *axis == 2 || *axis == -1 || *axis == -2)) return nullptr;
    for (int i = 0; i < concat.num_inputs(); ++i) {
      const Value* in = concat.input(i);
      const SymbolicShape* s = ShapeOfRank(in, 3);
      if (s == nullptr || ShapeOfRank(concat.output(0), 3) == nullptr || !((*s)[0] == heads_.merged)) continue;
      const Node* merge = in->producer();
      if (merge != nullptr && merge->domain().empty() && IsMerge(*merge, *s)) return merge->input(0);
    }
    return nullptr;
  }

  // BLOOM's ALiBi bias: slopes (H, 1) times positions (B, 1, S) give (B, H, S),
  // reshaped to (B*H, 1, S). A Reshape of a rank-3 (B, H, y) value to
  // (B*H, 1, y) or (B*H, y, 1) is the 4-D (B, H, 1, y) or (B, H, y, 1) merged:
  // the axis to unsqueeze, or -1.
  int RowMergeAxis(const Node& merge, const SymbolicShape& shape) const {
    if (merge.op_type() != "Reshape") return -1;
    const SymbolicShape* in = ShapeOfRank(merge.input(0), 3);
    if (in == nullptr || !((*in)[0] == heads_.batch) || !((*in)[1] == heads_.heads)) return -1;
    auto one = [](const Dim& d) { return d.is_known() && d.value() == 1; };
    if (one(shape[1]) && (*in)[2] == shape[2]) return 2;
    if (one(shape[2]) && (*in)[2] == shape[1]) return 3;
    return -1;
  }

  void NoteOtherOrder(const Node& merge, const SymbolicShape& shape) {
    if (merge.op_type() != "Reshape" || !other_order_.empty()) return;
    const SymbolicShape* in = ShapeOfRank(merge.input(0), 4);
    if (in == nullptr || !(DimMul((*in)[0], (*in)[1]) == heads_.merged) || !((*in)[2] == shape[1]) ||
        !((*in)[3] == shape[2]))
      return;
    other_order_ = absl::StrCat("'", merge.name(), "' merges (", (*in)[0].ToString(), ", ", (*in)[1].ToString(),
                                ") into the batch, viewed back as (", heads_.batch.ToString(), ", ",
                                heads_.heads.ToString(), "): another order of the batch and head axes");
  }

  // Softmax over the last axis of a 3-D input: axis -1 or 2 (before opset 13
  // the default axis 1 flattens the last two axes, which the 4-D op would not).
  bool LastAxis(const Node& softmax) const {
    const int64_t default_axis = graph_.OpsetFor("") >= 13 ? -1 : 1;
    auto axis = softmax.attributes().GetInt("axis", default_axis);
    return axis.ok() && (*axis == -1 || *axis == 2);
  }

  // `x` broadcast against the 3-D `result` is the same elements for every
  // merged index: rank <= 3, a leading 1 when rank 3. Its last two dims
  // broadcast against the result's last two in the 3-D and the 4-D form
  // alike (the same pairs of dims meet, so both forms fail or give the same
  // rows and keys): they need not be proven the result's (a bool mask sliced
  // from a buffer has min(L, T) rows where the scores have T).
  static bool BroadcastsAlongMerged(const Value* x, const SymbolicShape&) {
    if (x == nullptr || !x->shape() || x->shape()->size() > 3) return false;
    const SymbolicShape& xs = *x->shape();
    return xs.size() < 3 || (xs[0].is_known() && xs[0].value() == 1);
  }

  const Graph& graph_;
  Heads heads_;
  std::unordered_map<Value*, Leaf> leaves_;  // merged value -> its 4-D form
  std::unordered_map<Value*, Tensor> uniform_;
  std::unordered_map<Value*, bool> planned_;
  std::vector<Step> steps_;
  std::vector<std::pair<Node*, Value*>> views_back_;
  std::string other_order_;
  std::string per_head_input_;
};

// The split Reshape's (B, H) when it views a 3-D (B*H, x, y) as (B, H, x, y).
std::optional<Heads> SplitHeads(const Node& split) {
  if (!IsOp(&split, "Reshape") || split.num_outputs() != 1) return std::nullopt;
  const SymbolicShape* in = ShapeOfRank(split.input(0), 3);
  const SymbolicShape* out = ShapeOfRank(split.output(0), 4);
  if (in == nullptr || out == nullptr) return std::nullopt;
  Heads heads{(*out)[0], (*out)[1], DimMul((*out)[0], (*out)[1])};
  if (!((*in)[0] == heads.merged) || !((*in)[1] == (*out)[2]) || !((*in)[2] == (*out)[3])) return std::nullopt;
  return heads;
}

class UnmergeHeadsPass final : public Pass {
 public:
  std::string_view name() const override { return "unmerge_heads"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    bool changed = false;
    // By name: a rewrite may remove nodes the walk has not reached yet.
    std::vector<std::string> names;
    for (const Node* n : graph.nodes()) names.push_back(n->name());
    for (const std::string& name : names) {
      Node* split = graph.FindNode(name);
      if (split == nullptr) continue;
      auto heads = SplitHeads(*split);
      const bool sequence_first = !heads;
      if (!heads) heads = SequenceFirstSplitHeads(*split);
      if (!heads) continue;
      RegionPlan plan(graph, *heads);
      Value* merged = split->input(0);
      // A merged value viewed straight back is the merge's input: a region of
      // no op, which the cancel below handles like any other.
      if (!plan.Lift(merged, split)) {
        if (!plan.other_order().empty()) Report(context, split->name(), plan.other_order());
        if (!plan.per_head_input().empty()) Report(context, split->name(), plan.per_head_input());
        continue;
      }
      // The split of a Concat's view is that view already, and so is the
      // view of a per-head input with no op between (the view this pass
      // writes for it: rewriting it again would never reach a fixed point).
      if (plan.steps().empty() &&
          (plan.leaves().at(merged).heads_of != nullptr || plan.leaves().at(merged).per_head_input))
        continue;
      Value* result = Build(graph, plan, *heads, merged);
      if (sequence_first) result = SequenceFirstOutput(graph, result, *split->output(0));
      ReplaceOutputWith(graph, split, result);
      changed = true;
    }
    if (changed) graph.RemoveDeadNodes();
    return changed;
  }

 private:
  static void Report(PassContext& context, const std::string& at, const std::string& reason) {
    AddRejection(context.report, RejectedCandidate{at, "unmerge_heads", reason});
  }

  // Unsqueeze(input, axis) as the graph's opset writes it (axes an input from 13 on).
  static Value* Unsqueezed(Graph& graph, const RegionPlan::Leaf& leaf, const Value& merged) {
    const SymbolicShape& in = *leaf.input->shape();
    SymbolicShape shape = in;
    shape.insert(shape.begin() + leaf.unsqueeze_axis, Dim::Known(1));
    const std::string base = merged.name() + "/unmerged";
    Value* out = graph.AddValue(base, merged.type(), std::move(shape));
    const std::vector<int64_t> axes = {leaf.unsqueeze_axis};
    if (graph.OpsetFor("") >= 13) {
      Value* axes_value = graph.AddConstant(base + "_axes", Int64Vector(axes));
      graph.AddNode("Unsqueeze", "", graph.UniqueName(base), {leaf.input, axes_value}, {out});
    } else {
      Attributes attrs;
      attrs.Set("axes", axes);
      graph.AddNode("Unsqueeze", "", graph.UniqueName(base), {leaf.input}, {out}, std::move(attrs));
    }
    return out;
  }

  // Reshape(input, [0, 0, 0, target[2]]): the merge's view to y keys on the
  // 4-D value, its first three dims copied (allowzero 0), so that the view
  // follows whatever leading dims the value has (the mask proof evaluates it
  // on scores whose leading dims are 1). Like the shape rules, it reads the
  // target's y as the dim it holds.
  static Value* Viewed(Graph& graph, const RegionPlan::Leaf& leaf, const Value& merged) {
    const std::string base = merged.name() + "/unmerged_view";
    const SymbolicShape& in = *leaf.input->shape();
    Value* at = graph.AddConstant(base + "_key_index", Int64Vector({2}));
    Value* keys = graph.AddValue(base + "_keys", ElementType::kInt64, SymbolicShape{Dim::Known(1)});
    Attributes gather;
    gather.Set("axis", int64_t{0});
    graph.AddNode("Gather", "", graph.UniqueName(base + "_keys"), {leaf.view_of->input(1), at}, {keys},
                  std::move(gather));
    Value* copies = graph.AddConstant(base + "_copies", Int64Vector({0, 0, 0}));
    Value* target = graph.AddValue(base + "_target", ElementType::kInt64, SymbolicShape{Dim::Known(4)});
    Attributes concat;
    concat.Set("axis", int64_t{0});
    graph.AddNode("Concat", "", graph.UniqueName(base + "_target"), {copies, keys}, {target}, std::move(concat));
    Value* out = graph.AddValue(base, merged.type(), SymbolicShape{in[0], in[1], in[2], (*merged.shape())[2]});
    graph.AddNode("Reshape", "", graph.UniqueName(base), {leaf.input, target}, {out});
    return out;
  }

  // Reshape(input, Concat(Shape(heads_of)[0, 1], Shape(input)[1, 2])) with
  // allowzero 1: the 3-D input as (B, H, x, y), its two last dims kept, every
  // dim read at run time (a zero is a zero, not a copied dim). A per-head
  // input (no heads_of) takes the known B and H as constants.
  static Value* ViewedWithHeads(Graph& graph, const RegionPlan::Leaf& leaf, const Heads& heads) {
    const std::string base = leaf.input->name() + "/unmerged_view";
    const SymbolicShape& in = *leaf.input->shape();
    Value* out = graph.AddValue(base, leaf.input->type(), SymbolicShape{heads.batch, heads.heads, in[1], in[2]});
    Attributes reshape;
    reshape.Set("allowzero", int64_t{1});
    if (leaf.per_head_input && in[1].is_known() && in[2].is_known()) {  // every dim known: a constant target
      Value* target = graph.AddConstant(
          base + "_target", Int64Vector({heads.batch.value(), heads.heads.value(), in[1].value(), in[2].value()}));
      graph.AddNode("Reshape", "", graph.UniqueName(base), {leaf.input, target}, {out}, std::move(reshape));
      return out;
    }
    auto dims_of = [&](const Value* of, const std::vector<int64_t>& which, const std::string& name) {
      Value* shape = graph.AddValue(name + "_shape", ElementType::kInt64,
                                    SymbolicShape{Dim::Known(static_cast<int64_t>(of->shape()->size()))});
      graph.AddNode("Shape", "", graph.UniqueName(name + "_shape"), {const_cast<Value*>(of)}, {shape});
      Value* at = graph.AddConstant(name + "_index", Int64Vector(which));
      Value* dims = graph.AddValue(name, ElementType::kInt64, SymbolicShape{Dim::Known(2)});
      Attributes gather;
      gather.Set("axis", int64_t{0});
      graph.AddNode("Gather", "", graph.UniqueName(name), {shape, at}, {dims}, std::move(gather));
      return dims;
    };
    Value* batch_heads =
        leaf.per_head_input
            ? graph.AddConstant(base + "_heads", Int64Vector({heads.batch.value(), heads.heads.value()}))
            : dims_of(leaf.heads_of, {0, 1}, base + "_heads");
    Value* rows_cols = dims_of(leaf.input, {1, 2}, base + "_rows_cols");
    Value* target = graph.AddValue(base + "_target", ElementType::kInt64, SymbolicShape{Dim::Known(4)});
    Attributes concat;
    concat.Set("axis", int64_t{0});
    graph.AddNode("Concat", "", graph.UniqueName(base + "_target"), {batch_heads, rows_cols}, {target},
                  std::move(concat));
    graph.AddNode("Reshape", "", graph.UniqueName(base), {leaf.input, target}, {out}, std::move(reshape));
    return out;
  }

  // Adds the 4-D ops of the region; returns the 4-D form of `root`.
  static Value* Build(Graph& graph, const RegionPlan& plan, const Heads& heads, Value* root) {
    std::unordered_map<Value*, Value*> lifted;
    for (const auto& [merged, leaf] : plan.leaves())
      lifted[merged] = leaf.seq_first                                   ? SequenceFirstHeads(graph, *leaf.seq_first)
                       : leaf.heads_of != nullptr || leaf.per_head_input ? ViewedWithHeads(graph, leaf, heads)
                       : leaf.view_of != nullptr ? Viewed(graph, leaf, *merged)
                       : leaf.unsqueeze_axis < 0   ? leaf.input
                                                   : Unsqueezed(graph, leaf, *merged);
    for (const auto& [value, one] : plan.uniform()) lifted[value] = graph.AddConstant(value->name() + "/unmerged_value", one);
    for (const Step& step : plan.steps()) {
      Node* n = step.node;
      Value* v = n->output(0);
      std::vector<Value*> inputs;
      for (int i = 0; i < n->num_inputs(); ++i) {
        auto uniform = plan.uniform().find(n->input(i));
        inputs.push_back(step.lifted[i]                    ? lifted.at(n->input(i))
                         : uniform != plan.uniform().end() ? lifted.at(n->input(i))
                                                           : n->input(i));
      }
      Attributes attrs = n->attributes();
      if (n->op_type() == "Softmax" || n->op_type() == "LogSoftmax") attrs.Set("axis", int64_t{-1});
      if (n->op_type() == "Transpose") attrs.Set("perm", std::vector<int64_t>{0, 1, 3, 2});
      const SymbolicShape& s = *v->shape();
      Value* out = graph.AddValue(v->name() + "/unmerged", v->type(), SymbolicShape{heads.batch, heads.heads, s[1], s[2]});
      graph.AddNode(n->op_type(), "", graph.UniqueName(n->name() + "/unmerged"), std::move(inputs), {out},
                    std::move(attrs));
      lifted[v] = out;
    }
    for (const auto& [view, value] : plan.views_back()) ReplaceOutputWith(graph, view, lifted.at(value));
    return lifted.at(root);
  }
};

}  // namespace

std::unique_ptr<Pass> MakeUnmergeHeadsPass() { return std::make_unique<UnmergeHeadsPass>(); }

}  // namespace attune
