#include "engine/passes/attention/bias_candidates.h"

#include <algorithm>
#include <unordered_set>

namespace attune::attention {
namespace {

// Walks this many nodes at most when asking whether one value depends on another.
constexpr int kMaxDependencyNodes = 256;
// The mask steps between the scores and the softmax are a handful of nodes.
constexpr int kMaxPathNodes = 16;

// Whether `v` is `target` or computed from it (within kMaxDependencyNodes
// nodes; beyond them the answer is yes, which only drops a candidate).
bool DependsOn(const Value* v, const Value* target) {
  std::vector<const Value*> stack = {v};
  std::unordered_set<const Node*> seen;
  while (!stack.empty()) {
    const Value* x = stack.back();
    stack.pop_back();
    if (x == nullptr) continue;
    if (x == target) return true;
    const Node* n = x->producer();
    if (n == nullptr || !seen.insert(n).second) continue;
    if (static_cast<int>(seen.size()) > kMaxDependencyNodes) return true;
    for (const Value* in : n->inputs()) stack.push_back(in);
  }
  return false;
}

// One node of the path and the input the path enters it by.
struct Step {
  const Node* node;
  int path_input;
};

// The path's nodes from the softmax side back to scores_in; empty when some
// node on it reads scores_in through more than one input (Max(s, s·c) ...).
std::vector<Step> PathOf(const Value* scores_in, const Value* masked) {
  std::vector<Step> path;
  const Value* cur = masked;
  while (cur != scores_in) {
    const Node* n = cur->producer();
    if (n == nullptr || static_cast<int>(path.size()) >= kMaxPathNodes) return {};
    int on_path = -1;
    for (int i = 0; i < n->num_inputs(); ++i) {
      if (n->input(i) == nullptr || !DependsOn(n->input(i), scores_in)) continue;
      if (on_path >= 0) return {};
      on_path = i;
    }
    if (on_path < 0) return {};
    path.push_back({n, on_path});
    cur = n->input(on_path);
  }
  return path;
}

// The operand an Add step adds to the path value.
const Value* AddedOperand(const Step& s) {
  if (s.node->op_type() != "Add" || s.node->num_inputs() != 2) return nullptr;
  return s.node->input(1 - s.path_input);
}

}  // namespace

std::vector<const Value*> PositionBiasCandidates(const Value* scores_in, const Value* masked, const Value* scores) {
  std::vector<const Value*> inner, added;
  for (const Step& s : PathOf(scores_in, masked)) {
    const Value* x = AddedOperand(s);
    if (x == nullptr || DependsOn(x, scores)) continue;
    added.push_back(x);
    const Node* sum = x->producer();
    // Other layers may read the sum too (T5 adds its mask into position_bias
    // once and every layer adds that); inside this block's steps the bias must
    // be read once, which the proof checks on its cut.
    if (sum != nullptr && sum->op_type() == "Add" && sum->num_inputs() == 2)
      for (const Value* part : sum->inputs())
        if (part != nullptr && std::find(inner.begin(), inner.end(), part) == inner.end()) inner.push_back(part);
  }
  inner.insert(inner.end(), added.begin(), added.end());
  return inner;
}

BiasEntry BiasEntryOf(const Value* scores_in, const Value* masked, const Value* bias) {
  const std::vector<Step> path = PathOf(scores_in, masked);
  // Steps that give a visible key's score + bias unchanged whatever the bias:
  // Where selects it, Add and Sub of a mask that is 0 there keep it. A Max
  // with a floor, or a Cast, is exact only for the scores the probes use.
  for (const Step& s : path) {
    const std::string& op = s.node->op_type();
    const bool same_type_cast = op == "Cast" && s.node->input(0) != nullptr && s.node->output(0) != nullptr &&
                                s.node->input(0)->type() == s.node->output(0)->type() &&
                                s.node->input(0)->type() != ElementType::kUndefined;
    if (op != "Where" && op != "Add" && op != "Sub" && op != "Identity" && op != "Dropout" && !same_type_cast)
      return BiasEntry::kNone;
  }
  for (const Step& s : path) {
    const Value* x = AddedOperand(s);
    if (x == nullptr || s.node->input(s.path_input) != scores_in) continue;
    if (x == bias) return BiasEntry::kScores;
    const Node* sum = x->producer();
    if (sum != nullptr && sum->op_type() == "Add" && (sum->input(0) == bias || sum->input(1) == bias))
      return BiasEntry::kIntoMask;
  }
  return BiasEntry::kNone;
}

}  // namespace attune::attention
