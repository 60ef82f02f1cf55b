// Stage 1b and 4c of the attention rule (attention_stages.h): the attention
// weights. nn.MultiheadAttention with need_weights=True (PyTorch's default)
// returns the probabilities too, averaged over the heads or per head: the
// Softmax is read by P·V and by the weights' path. The fused op then gives
// the probabilities as its output 3 (B, H, T, S), exactly as the Softmax gave
// them, and every reader but P·V reads that output instead.
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/passes/attention/attention_stages.h"

namespace attune::attention {
namespace {

namespace c = captures;

// The values from the Softmax's output to what P·V reads, when only
// Identity nodes lie between (the split of the weights, once unmerge_heads
// read it as the 4-D Softmax, is an Identity when it is a graph output, and
// P·V may read that Identity's output); empty otherwise.
std::vector<const Value*> IdentityChain(const Value* p, const Value* read) {
  std::vector<const Value*> chain = {read};
  while (chain.back() != p) {
    const Node* n = chain.back()->producer();
    if (n == nullptr || !n->domain().empty() || n->op_type() != "Identity" || chain.size() > 8) return {};
    chain.push_back(n->input(0));
  }
  return chain;
}

}  // namespace

std::vector<const Node*> ProbabilityNodes(const pattern::Match& m) {
  const Node* softmax = m.node(c::kSoftmax);
  std::vector<const Node*> nodes = {softmax};
  const std::vector<const Value*> chain = IdentityChain(softmax->output(0), m.node(c::kOutputMatMul)->input(0));
  for (const Value* v : chain)
    if (v != softmax->output(0)) nodes.push_back(v->producer());
  return nodes;
}

std::variant<WeightsDecision, Reason> DecideWeights(const pattern::Match& m, int rank) {
  const Node* softmax = m.node(c::kSoftmax);
  const Node* pv = m.node(c::kOutputMatMul);
  const Value* p = softmax->output(0);
  const std::vector<Node*> nodes = m.nodes();
  const std::vector<const Value*> chain = IdentityChain(p, pv->input(0));
  // Who reads the probabilities outside the block, seen from the Softmax through Identity nodes.
  std::vector<std::string> readers;
  std::vector<const Value*> read_outside;
  std::vector<const Value*> seen = {p};
  for (size_t i = 0; i < seen.size(); ++i) {
    const Value* v = seen[i];
    bool outside = v->is_graph_output();
    if (v->is_graph_output()) readers.push_back(absl::StrCat("the graph output ", Quote(v)));
    for (const Use& use : v->uses()) {
      const bool identity = use.node->domain().empty() && use.node->op_type() == "Identity";
      if (identity && std::find(nodes.begin(), nodes.end(), use.node) != nodes.end()) {
        seen.push_back(use.node->output(0));
      } else if (std::find(nodes.begin(), nodes.end(), use.node) == nodes.end()) {
        readers.push_back(use.node->Describe());
        outside = true;
      }
    }
    if (outside) read_outside.push_back(v);
  }
  WeightsDecision d;
  if (read_outside.empty()) return d;
  const std::string who = absl::StrJoin(readers, ", ");
  if (chain.empty())
    return Reason(absl::StrCat("the probabilities ", Quote(p), " are also read by ", who,
                               ", and P·V reads them through other ops: the fused op gives its probabilities "
                               "output only where P·V reads the Softmax itself"));
  if (rank != 4)
    return Reason(absl::StrCat("the probabilities ", Quote(p), " are also read by ", who,
                               ", with the heads merged into the batch: the fused op gives them per head, "
                               "(B, H, T, S), and the heads were not split back out"));
  d.probabilities = p;
  d.read_outside = std::move(read_outside);
  d.readers = who;
  return d;
}

std::optional<Reason> CheckWeights(const WeightsDecision& w, const Operands& ops, const MaskDecision& mask,
                                   const SinkDecision& sinks) {
  if (w.probabilities == nullptr) return std::nullopt;
  auto refuse = [&](const std::string& what) {
    return Reason(absl::StrCat("the probabilities ", Quote(w.probabilities), " are also read by ", w.readers,
                               ": the fused op does not give them ", what));
  };
  if (ops.type != ElementType::kFloat32)
    return refuse(absl::StrCat("in ", ElementTypeName(ops.type), " (its probabilities output is float32 only)"));
  if (ops.k.past != nullptr) return refuse("with a KV cache");
  if (!sinks.logits.empty()) return refuse("with an attention sink (the Softmax also weighs the sink column)");
  if (!mask.bias.empty()) return refuse("with a position bias");
  if (mask.half) return refuse("with 16-bit scores");
  if (!mask.hidden_nonfinite[0] || !mask.hidden_nonfinite[1])
    return refuse("where the mask replaces the scores of hidden keys (Where) rather than adding to them");
  return std::nullopt;
}

}  // namespace attune::attention
