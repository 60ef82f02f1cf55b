// elementwise_chain_fusion: trees of float32 element-wise ops whose
// intermediates nobody else reads become one attune.ElementwiseChain
// (ops/elementwise/elementwise_chain.h), which runs them in one pass over
// memory and gives their bits. The other fusions run first, so a chain is
// what no fused op describes: an activation written out that no rule knows,
// a scale and a shift, RoPE's products and sum.
//
// A node joins a chain when its op is one the chain runs, it has no
// attributes, and every operand is float32 and either of the node's output
// shape or one element of no more dims (a scalar). A node's operand made by
// another such node of the same output shape, read by nothing else, puts the
// two in one chain, up to kMaxChainSteps steps and kMaxChainInputs inputs.
// Chains of one op are left as they are.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "engine/passes/passes.h"
#include "ops/elementwise/elementwise_chain.h"

namespace attune {
namespace {

using elementwise::kChainBinaryOps;
using elementwise::kChainOps;
using elementwise::kMaxChainInputs;
using elementwise::kMaxChainSteps;

enum class Role { kNone, kFull, kScalar };

// How `v` takes part in an element-wise op whose output has shape `out`.
Role RoleOf(const Value* v, const SymbolicShape& out) {
  if (v == nullptr || v->type() != ElementType::kFloat32 || !v->shape()) return Role::kNone;
  if (*v->shape() == out) return Role::kFull;
  if (v->shape()->size() > out.size()) return Role::kNone;
  for (const Dim& d : *v->shape())
    if (!(d == Dim::Known(1))) return Role::kNone;
  return Role::kScalar;
}

bool Joins(const Node& n) {
  if (!n.domain().empty() || n.num_outputs() != 1 || !n.attributes().empty()) return false;
  const auto it = std::find(kChainOps.begin(), kChainOps.end(), n.op_type());
  if (it == kChainOps.end()) return false;
  const Value* out = n.output(0);
  if (out == nullptr || out->type() != ElementType::kFloat32 || !out->shape()) return false;
  const int arity = it - kChainOps.begin() < kChainBinaryOps ? 2 : 1;
  if (n.num_inputs() != arity) return false;
  bool full = false;
  for (const Value* in : n.inputs()) {
    const Role r = RoleOf(in, *out->shape());
    if (r == Role::kNone) return false;
    full |= r == Role::kFull;
  }
  return full;
}

class ElementwiseChainPass final : public Pass {
 public:
  std::string_view name() const override { return "elementwise_chain_fusion"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    // Chains grow forward: a node takes over the chains of the operands it
    // alone reads, so every chain is a tree whose last node is its output.
    absl::flat_hash_map<const Node*, std::vector<Node*>> chain_of;  // by its last node
    absl::flat_hash_map<const Node*, const Node*> last_of;          // member -> last node
    for (Node* n : order) {
      if (!Joins(*n)) continue;
      std::vector<Node*> chain;
      for (Value* in : n->inputs()) {
        Node* p = in->producer();
        if (p == nullptr || !last_of.contains(p) || last_of[p] != p || in->uses().size() != 1 ||
            in->is_graph_output() || !(*in->shape() == *n->output(0)->shape()))
          continue;
        if (chain.size() + chain_of[p].size() + 1 > static_cast<size_t>(kMaxChainSteps)) continue;
        for (Node* m : chain_of[p]) chain.push_back(m);
        chain_of.erase(p);
      }
      chain.push_back(n);
      for (Node* m : chain) last_of[m] = n;
      chain_of[n] = std::move(chain);
    }
    bool changed = false;
    for (Node* n : order) {
      auto it = chain_of.find(n);
      if (it == chain_of.end() || it->second.size() < 2) continue;
      changed |= Fuse(graph, context, it->second);
    }
    if (changed && graph.OpsetFor("attune") == 0) graph.SetOpset("attune", 1);
    return changed;
  }

 private:
  // Replaces the chain by one node; false when it reads more inputs than a
  // chain takes. Members are in topological order (each node follows the
  // chains of its operands), the last is the output.
  static bool Fuse(Graph& graph, PassContext& context, const std::vector<Node*>& members) {
    Node* last = members.back();
    const SymbolicShape& shape = *last->output(0)->shape();
    absl::flat_hash_map<const Value*, int64_t> ref;  // inputs first, then steps
    std::vector<Value*> inputs;
    std::vector<int64_t> scalar;
    for (Node* m : members)
      for (Value* in : m->inputs()) {
        const Node* p = in->producer();
        if ((p != nullptr && std::find(members.begin(), members.end(), p) != members.end()) || ref.contains(in))
          continue;
        ref[in] = static_cast<int64_t>(inputs.size());
        inputs.push_back(in);
        scalar.push_back(RoleOf(in, shape) == Role::kScalar ? 1 : 0);
      }
    if (inputs.size() > static_cast<size_t>(kMaxChainInputs)) return false;
    std::vector<std::string> ops;
    std::vector<int64_t> operands;
    for (size_t j = 0; j < members.size(); ++j) {
      const Node* m = members[j];
      ops.push_back(m->op_type());
      operands.push_back(ref.at(m->input(0)));
      operands.push_back(m->num_inputs() > 1 ? ref.at(m->input(1)) : -1);
      ref[m->output(0)] = static_cast<int64_t>(inputs.size() + j);
    }
    OpFusionRecord record;
    record.op = "ElementwiseChain";
    record.pattern = "elementwise_chain";
    record.attributes = absl::StrJoin(ops, " ");
    for (const Node* m : members) record.replaced.push_back(m->name());
    record.node = last->name();
    Attributes attrs;
    attrs.Set("ops", ops);
    attrs.Set("operands", operands);
    attrs.Set("scalar", scalar);
    graph.ReplaceNode(last, "ElementwiseChain", "attune", inputs, std::move(attrs));
    for (auto m = members.rbegin() + 1; m != members.rend(); ++m) (void)graph.RemoveNode(*m);
    if (context.report != nullptr) context.report->op_fusions.push_back(std::move(record));
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeElementwiseChainPass() { return std::make_unique<ElementwiseChainPass>(); }

}  // namespace attune
