// Keeps convolution outputs channels last between convolutions. oneDNN runs
// its convolutions on channels-last data (nhwc for float32 on AVX-512), so an
// ONNX Conv pays a reorder of X in and of Y out on every call; between two
// convolutions those two reorders undo each other. A value is kept channels
// last ([N, H, W, C] for [N, C, H, W]) when every reader takes it so:
//  - a convolution, as its X (attune.FusedConv with channels_last_input), or
//    as the residual Z of one whose own output is channels last;
//  - a per-channel scale Mul(x, s), s of shape [N or 1, C, 1, 1] (a
//    squeeze-and-excitation block), whose output is then channels last too
//    and whose s is reshaped to [N or 1, 1, 1, C];
//  - a GlobalAveragePool, which becomes ReduceMean over axes 1 and 2 and a
//    Reshape of its [N, 1, 1, C] to [N, C, 1, 1] (the same bytes).
// Convolutions (channels_last_output) and scales produce such values. Every
// other reader, a graph output included, keeps the ONNX layout. Runs once,
// after the epilogue fusions, whose residual Z it reads.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/passes/passes.h"

namespace attune {
namespace {

constexpr char kInput[] = "channels_last_input";
constexpr char kOutput[] = "channels_last_output";
// ReduceMean takes its axes as an input from this opset on.
constexpr int kReduceAxesInputOpset = 18;

enum class Kind { kConv, kScale, kPool };

struct Site {
  Kind kind;
  int data = 0;  // the input that may be channels last
};

bool IsConv(const Node& n) {
  return (n.op_type() == "Conv" && n.domain().empty()) || (n.op_type() == "FusedConv" && n.domain() == "attune");
}

bool Float32(const Value* v) { return v != nullptr && v->type() == ElementType::kFloat32; }

bool IsKnown(const SymbolicShape& s, size_t i, std::optional<int64_t> value = std::nullopt) {
  return s[i].is_known() && (!value || s[i].value() == *value);
}

// A Mul of a rank-4 x by s of shape [N or 1, C, 1, 1]: the index of x, or -1.
int ScaledInput(const Node& n) {
  if (n.op_type() != "Mul" || !n.domain().empty() || n.num_inputs() != 2 || n.num_outputs() != 1) return -1;
  const Value* y = n.output(0);
  if (!Float32(y) || !y->shape() || y->shape()->size() != 4) return -1;
  const SymbolicShape& out = *y->shape();
  for (int x = 0; x < 2; ++x) {
    const Value* a = n.input(x);
    const Value* s = n.input(1 - x);
    if (!Float32(a) || !Float32(s) || !a->shape() || !s->shape() || *a->shape() != out || s->shape()->size() != 4)
      continue;
    const SymbolicShape& scale = *s->shape();
    const bool batch = IsKnown(scale, 0, 1) || scale[0] == out[0];
    if (batch && scale[1] == out[1] && !out[1].is_unknown() && IsKnown(scale, 2, 1) && IsKnown(scale, 3, 1) &&
        !(IsKnown(out, 2, 1) && IsKnown(out, 3, 1)))
      return x;
  }
  return -1;
}

std::optional<Site> SiteOf(const Node& n) {
  if (IsConv(n) && n.num_outputs() == 1 && Float32(n.output(0)) && Float32(n.input(0)) && n.output(0)->shape() &&
      n.output(0)->shape()->size() >= 3)
    return Site{Kind::kConv, 0};
  if (const int x = ScaledInput(n); x >= 0) return Site{Kind::kScale, x};
  if (n.op_type() == "GlobalAveragePool" && n.domain().empty() && n.num_inputs() == 1 && n.num_outputs() == 1 &&
      Float32(n.input(0)) && n.input(0)->shape() && n.input(0)->shape()->size() == 4)
    return Site{Kind::kPool, 0};
  return std::nullopt;
}

const Value* Residual(const Node& n) { return n.domain() == "attune" && n.num_inputs() > 3 ? n.input(3) : nullptr; }

SymbolicShape ChannelsLast(SymbolicShape shape) {
  const Dim c = shape[1];
  shape.erase(shape.begin() + 1);
  shape.push_back(c);
  return shape;
}

class ConvLayoutPass final : public Pass {
 public:
  std::string_view name() const override { return "conv_layout"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    nodes_.clear();
    sites_.clear();
    last_.clear();
    for (const Node* n : graph.nodes())
      if (n->attributes().Has(kInput) || n->attributes().Has(kOutput)) return false;  // laid out before
    for (Node* n : graph.nodes())
      if (auto site = SiteOf(*n)) {
        nodes_.push_back(n);
        sites_[n] = *site;
        if (site->kind != Kind::kPool)
          last_[n] = !n->output(0)->is_graph_output() && !n->output(0)->uses().empty();
      }
    Settle();
    // Decided for all before any node is replaced (a replacement is a new node).
    std::vector<bool> in(nodes_.size()), out(nodes_.size());
    for (size_t i = 0; i < nodes_.size(); ++i) {
      in[i] = IsLast(nodes_[i]->input(sites_[nodes_[i]].data)->producer());
      out[i] = IsLast(nodes_[i]);
    }
    bool any = false;
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (!in[i] && !out[i]) continue;
      Node* n = nodes_[i];
      switch (sites_[n].kind) {
        case Kind::kConv: RewriteConv(graph, n, in[i], out[i]); break;
        case Kind::kScale: RewriteScale(graph, n, sites_[n].data); break;
        case Kind::kPool: RewritePool(graph, n); break;
      }
      any = true;
    }
    if (any && graph.OpsetFor("attune") == 0) graph.SetOpset("attune", 1);
    return any;
  }

 private:
  bool IsLast(const Node* n) const {
    auto it = last_.find(n);
    return it != last_.end() && it->second;
  }

  // Whether `use` takes its value channels last.
  bool TakesLast(const Use& use) const {
    auto it = sites_.find(use.node);
    if (it == sites_.end()) return false;
    switch (it->second.kind) {
      case Kind::kConv: return use.index == 0 || (use.index == 3 && IsLast(use.node));
      case Kind::kScale: return use.index == it->second.data && IsLast(use.node);
      case Kind::kPool: return true;
    }
    return false;
  }

  // Drops channels-last outputs that break the rules until none does.
  void Settle() {
    for (bool changed = true; changed;) {
      changed = false;
      for (Node* n : nodes_) {
        if (!IsLast(n)) continue;
        bool keep = true;
        for (const Use& use : n->output(0)->uses()) keep &= TakesLast(use);
        const Site& site = sites_[n];
        if (site.kind == Kind::kScale) keep &= IsLast(n->input(site.data)->producer());
        if (const Value* z = site.kind == Kind::kConv ? Residual(*n) : nullptr) keep &= IsLast(z->producer());
        if (!keep) {
          last_[n] = false;
          changed = true;
        }
      }
    }
  }

  static void RewriteConv(Graph& graph, Node* n, bool in, bool out) {
    Attributes attrs = n->attributes();
    attrs.Set(kInput, static_cast<int64_t>(in));
    attrs.Set(kOutput, static_cast<int64_t>(out));
    Value* y = n->output(0);
    std::vector<Value*> inputs(n->inputs().begin(), n->inputs().end());
    graph.ReplaceNode(n, "FusedConv", "attune", std::move(inputs), std::move(attrs));
    if (out) y->set_shape(ChannelsLast(*y->shape()));
  }

  // Mul(x, s): s viewed as [N or 1, 1, 1, C] (Reshape to [0, 1, 1, -1]).
  static void RewriteScale(Graph& graph, Node* n, int x) {
    Value* s = n->input(1 - x);
    Value* y = n->output(0);
    Value* target = graph.AddConstant(graph.UniqueName(n->name() + "/scale_shape"),
                                      *Tensor::FromVector<int64_t>({4}, {0, 1, 1, -1}));
    Value* viewed = graph.AddValue(graph.UniqueName(s->name() + "/channels_last"), s->type(),
                                   ChannelsLast(*s->shape()));
    graph.AddNode("Reshape", "", graph.UniqueName(n->name() + "/Reshape"), {s, target}, {viewed});
    std::vector<Value*> inputs = {n->input(0), n->input(1)};
    inputs[1 - x] = viewed;
    graph.ReplaceNode(n, "Mul", "", std::move(inputs), n->attributes());
    y->set_shape(ChannelsLast(*y->shape()));
  }

  // GlobalAveragePool(x) as ReduceMean(x, axes 1 and 2) viewed as [N, C, 1, 1].
  static void RewritePool(Graph& graph, Node* n) {
    Value* x = n->input(0);
    Value* y = n->output(0);
    SymbolicShape mean_shape = *x->shape();
    mean_shape[1] = Dim::Known(1);
    mean_shape[2] = Dim::Known(1);
    Value* mean = graph.AddValue(graph.UniqueName(y->name() + "/channels_last"), y->type(), mean_shape);
    Attributes reduce;
    reduce.Set("keepdims", int64_t{1});
    std::vector<Value*> reduce_inputs = {x};
    if (graph.OpsetFor("") >= kReduceAxesInputOpset) {
      reduce_inputs.push_back(graph.AddConstant(graph.UniqueName(n->name() + "/axes"),
                                                *Tensor::FromVector<int64_t>({2}, {1, 2})));
    } else {
      reduce.Set("axes", std::vector<int64_t>{1, 2});
    }
    graph.AddNode("ReduceMean", "", graph.UniqueName(n->name() + "/ReduceMean"), std::move(reduce_inputs), {mean},
                  std::move(reduce));
    Value* target = graph.AddConstant(graph.UniqueName(n->name() + "/pooled_shape"),
                                      *Tensor::FromVector<int64_t>({4}, {0, -1, 1, 1}));
    graph.ReplaceNode(n, "Reshape", "", {mean, target});
  }

  std::vector<Node*> nodes_;
  absl::flat_hash_map<const Node*, Site> sites_;
  absl::flat_hash_map<const Node*, bool> last_;
};

}  // namespace

std::unique_ptr<Pass> MakeConvLayoutPass() { return std::make_unique<ConvLayoutPass>(); }

}  // namespace attune
