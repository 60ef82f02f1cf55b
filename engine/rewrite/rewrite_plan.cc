#include "engine/rewrite/rewrite_plan.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"

namespace attune {
namespace {

// Every node whose outputs `roots` (transitively) read.
absl::flat_hash_set<const Node*> AncestorsOf(const std::vector<Value*>& roots) {
  absl::flat_hash_set<const Node*> seen;
  std::vector<const Value*> stack(roots.begin(), roots.end());
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v == nullptr || v->producer() == nullptr) continue;
    if (!seen.insert(v->producer()).second) continue;
    for (const Value* in : v->producer()->inputs()) stack.push_back(in);
  }
  return seen;
}

}  // namespace

std::string RewritePlan::AddValue(const std::string& key, const std::string& name_hint, ElementType type,
                                  std::optional<SymbolicShape> shape) {
  values.push_back({key, name_hint, type, std::move(shape), std::nullopt});
  return "$" + key;
}

absl::StatusOr<AppliedPlan> ApplyRewritePlan(Graph& graph, const RewritePlan& plan) {
  AppliedPlan applied;
  std::map<std::string, Value*> created;
  for (const PlannedValue& pv : plan.values) {
    Value* v = pv.constant ? graph.AddConstant(pv.name_hint, *pv.constant)
                           : graph.AddValue(pv.name_hint, pv.type, pv.shape);
    created[pv.key] = v;
    applied.value_names[pv.key] = v->name();
  }
  auto resolve = [&](const std::string& ref) -> absl::StatusOr<Value*> {
    if (ref.empty()) return nullptr;
    if (ref[0] == '$') {
      auto it = created.find(ref.substr(1));
      if (it == created.end()) return absl::InternalError(absl::StrCat("fusion plan: no planned value ", ref));
      return it->second;
    }
    Value* v = graph.FindValue(ref);
    if (v == nullptr) return absl::InvalidArgumentError(absl::StrCat("fusion plan: no value '", ref, "'"));
    return v;
  };

  // Resolve everything before the first edit so a bad plan leaves the graph untouched.
  std::vector<std::vector<Value*>> node_inputs, node_outputs;
  std::vector<Value*> all_inputs;
  for (const PlannedNode& n : plan.nodes) {
    std::vector<Value*> ins, outs;
    for (const std::string& ref : n.inputs) {
      auto v = resolve(ref);
      if (!v.ok()) return v.status();
      ins.push_back(*v);
      if (*v != nullptr && ref[0] != '$') all_inputs.push_back(*v);
    }
    for (const std::string& ref : n.outputs) {
      auto v = resolve(ref);
      if (!v.ok()) return v.status();
      outs.push_back(*v);
    }
    node_inputs.push_back(std::move(ins));
    node_outputs.push_back(std::move(outs));
  }
  std::vector<std::pair<Value*, Value*>> replacements;
  for (const auto& [from, to] : plan.replace) {
    auto f = resolve(from);
    auto t = resolve(to);
    if (!f.ok()) return f.status();
    if (!t.ok()) return t.status();
    replacements.emplace_back(*f, *t);
  }

  absl::flat_hash_set<const Node*> ancestors = AncestorsOf(all_inputs);
  if (graph.OpsetFor("attune") == 0) graph.SetOpset("attune", 1);
  std::vector<Node*> new_nodes;
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    const PlannedNode& n = plan.nodes[i];
    Node* node = graph.AddNode(n.op_type, n.domain, graph.UniqueName(n.name_hint), node_inputs[i], node_outputs[i],
                               n.attributes);
    new_nodes.push_back(node);
    applied.node_names.push_back(node->name());
  }
  for (const Node* n : new_nodes) ancestors.insert(n);
  std::vector<std::pair<std::string, Value*>> renamed_outputs;  // graph outputs that must keep their names
  for (const auto& [from, to] : replacements) {
    if (from->is_graph_output()) renamed_outputs.emplace_back(from->name(), to);
    graph.ReplaceAllUsesWith(from, to);
    // Readers the new nodes depend on keep the old value.
    std::vector<Use> uses = to->uses();
    for (const Use& use : uses)
      if (ancestors.contains(use.node)) graph.SetNodeInput(use.node, use.index, from);
  }

  absl::flat_hash_set<std::string> before;
  for (const Node* n : graph.nodes()) before.insert(n->name());
  graph.RemoveDeadNodes();
  absl::flat_hash_set<std::string> after;
  for (const Node* n : graph.nodes()) after.insert(n->name());
  for (const std::string& name : before)
    if (!after.contains(name)) applied.removed.push_back(name);
  std::sort(applied.removed.begin(), applied.removed.end());

  // A graph output keeps its name: once the old producer is gone, an Identity
  // recreates the name; if the old value is still computed, the output stays on it.
  for (const auto& [name, to] : renamed_outputs) {
    Value* target = graph.FindValue(name);
    if (target == nullptr) {
      target = graph.AddValue(name, to->type(), to->shape());
      graph.AddNode("Identity", "", graph.UniqueName(name + "/fused_output"), {to}, {target});
    }
    // Move only the graph-output references of `to`: its node readers go back to it.
    const std::vector<Use> readers = to->uses();
    graph.ReplaceAllUsesWith(to, target);
    for (const Use& use : readers) graph.SetNodeInput(use.node, use.index, to);
  }
  return applied;
}

}  // namespace attune
