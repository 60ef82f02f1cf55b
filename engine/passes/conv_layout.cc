// Keeps convolution outputs channels last between convolutions. oneDNN runs
// its convolutions on channels-last data (nhwc for float32 on AVX-512), so an
// ONNX Conv pays a reorder of X in and of Y out on every call; between two
// convolutions those two reorders undo each other. A convolution whose
// output is read by convolutions only (as their X, or as the residual Z of
// one whose own output is channels last too) writes it channels last
// ([N, H, W, C]), and its readers take it so (attune.FusedConv with
// channels_last_output / channels_last_input). Every other reader, a graph
// output included, keeps the ONNX layout. Runs once, after the epilogue
// fusions, whose residual Z it reads.
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "engine/passes/passes.h"

namespace attune {
namespace {

constexpr char kInput[] = "channels_last_input";
constexpr char kOutput[] = "channels_last_output";

bool IsConv(const Node& n) {
  return (n.op_type() == "Conv" && n.domain().empty()) || (n.op_type() == "FusedConv" && n.domain() == "attune");
}

// A float32 convolution whose output shape has a known rank of 3 or more.
bool Candidate(const Node& n) {
  if (!IsConv(n) || n.num_outputs() != 1 || n.output(0) == nullptr || n.input(0) == nullptr) return false;
  const Value& y = *n.output(0);
  return y.type() == ElementType::kFloat32 && n.input(0)->type() == ElementType::kFloat32 && y.shape() &&
         y.shape()->size() >= 3;
}

const Value* Residual(const Node& n) { return n.domain() == "attune" && n.num_inputs() > 3 ? n.input(3) : nullptr; }

class ConvLayoutPass final : public Pass {
 public:
  std::string_view name() const override { return "conv_layout"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    std::vector<Node*> convs;
    for (Node* n : graph.nodes()) {
      if (n->attributes().Has(kInput) || n->attributes().Has(kOutput)) return false;  // laid out before
      if (Candidate(*n)) convs.push_back(n);
    }
    absl::flat_hash_map<const Node*, bool> last;  // output channels last
    for (Node* n : convs) last[n] = !n->output(0)->is_graph_output() && !n->output(0)->uses().empty();
    auto is_last = [&](const Node* n) { return n != nullptr && last.contains(n) && last[n]; };
    // Drop outputs that break the rule until none does: a reader that is no
    // convolution, or a residual read by (or read from) a channels-first output.
    for (bool changed = true; changed;) {
      changed = false;
      for (Node* n : convs) {
        if (!last[n]) continue;
        bool keep = true;
        for (const Use& use : n->output(0)->uses())
          keep &= last.contains(use.node) && (use.index == 0 || (use.index == 3 && is_last(use.node)));
        const Value* z = Residual(*n);
        if (z != nullptr) keep &= is_last(z->producer());
        if (!keep) {
          last[n] = false;
          changed = true;
        }
      }
    }
    // Decided for all before any node is replaced (a replacement is a new node).
    std::vector<bool> in(convs.size());
    for (size_t i = 0; i < convs.size(); ++i) in[i] = is_last(convs[i]->input(0)->producer());
    bool any = false;
    for (size_t i = 0; i < convs.size(); ++i) {
      Node* n = convs[i];
      if (!last[n] && !in[i]) continue;
      Attributes attrs = n->attributes();
      attrs.Set(kInput, static_cast<int64_t>(in[i]));
      attrs.Set(kOutput, static_cast<int64_t>(last[n]));
      Value* y = n->output(0);
      const bool out = last[n];
      std::vector<Value*> inputs(n->inputs().begin(), n->inputs().end());
      graph.ReplaceNode(n, "FusedConv", "attune", std::move(inputs), std::move(attrs));
      if (out) {
        SymbolicShape shape = *y->shape();
        const Dim c = shape[1];
        shape.erase(shape.begin() + 1);
        shape.push_back(c);
        y->set_shape(std::move(shape));
      }
      any = true;
    }
    if (any && graph.OpsetFor("attune") == 0) graph.SetOpset("attune", 1);
    return any;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeConvLayoutPass() { return std::make_unique<ConvLayoutPass>(); }

}  // namespace attune
