// Common-subexpression elimination: small constants with the same contents
// merge, then nodes with the same op, domain, attributes and inputs merge
// (exporters repeat Shape -> Gather -> Unsqueeze chains for every use), then
// small integer tensors the shape analysis proves equal merge even when they
// are computed from different tensors (seq read from input_ids in one place
// and from a hidden state in another).
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/graph_edits.h"
#include "engine/passes/passes.h"
#include "engine/passes/shape_analysis.h"

namespace attune {
namespace {

// Constants larger than this are not compared (weights are rarely duplicated
// and comparing them on every pipeline iteration would cost more than it saves).
constexpr size_t kMaxMergedConstantBytes = 64 << 10;

bool IsNondeterministic(const Node& node) {
  static const char* kRandom[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                  "Multinomial", "Bernoulli"};
  for (const char* op : kRandom)
    if (node.domain().empty() && node.op_type() == op) return true;
  return false;
}

bool SameAttributes(const Attributes& a, const Attributes& b) {
  if (a.all().size() != b.all().size()) return false;
  for (auto ia = a.all().begin(), ib = b.all().begin(); ia != a.all().end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.index() != ib->second.index()) return false;
    const bool same = std::visit(
        [&](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          const T& y = std::get<T>(ib->second);
          if constexpr (std::is_same_v<T, Tensor>) return SameTensor(x, y);
          else return x == y;
        },
        ia->second);
    if (!same) return false;
  }
  return true;
}

std::string NodeKey(const Node& node) {
  std::string key = absl::StrCat(node.domain(), "::", node.op_type(), "/", node.num_outputs(), "(");
  for (const Value* in : node.inputs()) absl::StrAppend(&key, reinterpret_cast<uintptr_t>(in), ",");
  absl::StrAppend(&key, ")", node.attributes().ToString());
  return key;
}

size_t ConstantHash(const Tensor& t) {
  return absl::HashOf(static_cast<int>(t.type()), t.shape(),
                      absl::string_view(static_cast<const char*>(t.raw_data()), t.byte_size()));
}

class CommonSubexpressionPass final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    bool changed = MergeConstants(graph, order);
    absl::flat_hash_map<std::string, std::vector<Node*>> seen;
    for (Node* node : order) {
      // Two control-flow nodes with the same inputs may run different subgraphs.
      if (IsNondeterministic(*node) || node->has_subgraphs()) continue;
      std::vector<Node*>& candidates = seen[NodeKey(*node)];
      bool merged = false;
      for (Node*& c : candidates) {
        if (!SameAttributes(c->attributes(), node->attributes())) continue;
        if (Mergeable(*c, *node)) {
          RETURN_IF_ERROR(Merge(graph, node, c));
        } else if (Mergeable(*node, *c)) {
          // The earlier twin is the one whose outputs are anonymous: keep the
          // graph output's node instead. Both read the same inputs, so the
          // earlier one's readers can read the later one without a cycle.
          RETURN_IF_ERROR(Merge(graph, c, node));
          c = node;
        } else {
          continue;
        }
        merged = true;
        break;
      }
      if (!merged) candidates.push_back(node);
      changed |= merged;
    }
    ASSIGN_OR_RETURN(bool merged_values, MergeEqualShapeValues(graph));
    changed |= merged_values;
    return changed;
  }

 private:
  // Values whose tracked contents are the same symbolic dims: every reader of
  // a later one (in topological order) reads the earlier one instead, which
  // cannot form a cycle since the earlier one does not depend on the later's readers.
  static absl::StatusOr<bool> MergeEqualShapeValues(Graph& graph) {
    ASSIGN_OR_RETURN(ShapeAnalysis analysis, ShapeAnalysis::Run(graph));
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    absl::flat_hash_map<std::string, Value*> first;
    bool changed = false;
    for (Node* node : order) {
      for (Value* out : node->outputs()) {
        if (out == nullptr || out->uses().empty()) continue;
        auto key = ContentKey(analysis.facts(out));
        if (!key) continue;
        auto [it, inserted] = first.try_emplace(*key, out);
        if (inserted || it->second == out || out->is_graph_output()) continue;
        graph.ReplaceAllUsesWith(out, it->second);
        changed = true;
      }
    }
    return changed;
  }

  // "type/shape/elements" when every element is a number or a symbol.
  static std::optional<std::string> ContentKey(const ValueFacts& f) {
    if (!f.data || !f.shape) return std::nullopt;
    std::string key = absl::StrCat(static_cast<int>(f.type), "/", SymbolicShapeToString(*f.shape), "/");
    for (const Dim& d : *f.data) {
      if (d.is_unknown()) return std::nullopt;
      absl::StrAppend(&key, d.ToString(), ",");
    }
    return key;
  }

  // Points every reader of `dup`'s outputs at `keep`'s and removes `dup`.
  static absl::Status Merge(Graph& graph, Node* dup, Node* keep) {
    for (int o = 0; o < dup->num_outputs(); ++o) {
      Value* from = dup->output(o);
      if (from == nullptr) continue;
      Value* to = keep->output(o);
      if (to->type() == ElementType::kUndefined) to->set_type(from->type());
      to->set_shape(MergeShapes(to->shape(), from->shape()));
      graph.ReplaceAllUsesWith(from, to);
    }
    return graph.RemoveNode(dup);
  }

  // `dup` can be replaced by `keep`: every output `dup` has, `keep` has too,
  // and no output of `dup` is a graph output (its name would be lost).
  static bool Mergeable(const Node& keep, const Node& dup) {
    for (int o = 0; o < dup.num_outputs(); ++o) {
      const Value* d = dup.output(o);
      if (d == nullptr) continue;
      if (keep.output(o) == nullptr || d->is_graph_output()) return false;
    }
    return true;
  }

  static bool MergeConstants(Graph& graph, const std::vector<Node*>& order) {
    absl::flat_hash_map<size_t, std::vector<Value*>> by_hash;
    bool changed = false;
    for (Node* node : order) {
      for (int i = 0; i < node->num_inputs(); ++i) {
        Value* in = node->input(i);
        if (in == nullptr || in->constant() == nullptr || in->producer() != nullptr || in->is_graph_input() ||
            in->constant()->byte_size() > kMaxMergedConstantBytes)
          continue;
        std::vector<Value*>& bucket = by_hash[ConstantHash(*in->constant())];
        Value* keep = nullptr;
        for (Value* c : bucket)
          if (c == in || SameTensor(*c->constant(), *in->constant())) {
            keep = c;
            break;
          }
        if (keep == nullptr) {
          bucket.push_back(in);
        } else if (keep != in) {
          graph.SetNodeInput(node, i, keep);
          changed = true;
        }
      }
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeCommonSubexpressionPass() { return std::make_unique<CommonSubexpressionPass>(); }

}  // namespace attune
