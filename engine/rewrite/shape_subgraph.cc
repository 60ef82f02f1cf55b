#include "engine/rewrite/shape_subgraph.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/pattern/constants.h"

namespace attune {
namespace {

bool IsShapeReader(const Node& n) { return n.domain().empty() && (n.op_type() == "Shape" || n.op_type() == "Size"); }

bool IsRandom(const Node& n) {
  static const char* kRandom[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                  "Multinomial", "Bernoulli"};
  for (const char* op : kRandom)
    if (n.op_type() == op) return true;
  return false;
}

}  // namespace

absl::StatusOr<ShapeSubgraph> ShapeSubgraph::Cut(const Graph& graph, const Value* root, int max_nodes) {
  return Cut(graph, root, CutValues{}, max_nodes);
}

absl::StatusOr<ShapeSubgraph> ShapeSubgraph::Cut(const Graph& graph, const Value* root, const CutValues& values,
                                                 int max_nodes) {
  ShapeSubgraph cut;
  absl::flat_hash_set<const Node*> included;
  absl::flat_hash_set<const Value*> sources, constants, seen;
  absl::flat_hash_set<const Value*> value_set(values.values.begin(), values.values.end());
  cut.value_sources_ = values.values;
  std::vector<const Value*> stack = {root};
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v == nullptr || !seen.insert(v).second) continue;
    if (value_set.contains(v)) continue;
    if (pattern::ConstantOf(v) != nullptr) {
      constants.insert(v);
      continue;
    }
    const Node* n = v->producer();
    if (n == nullptr && values.graph_inputs && v->is_graph_input()) {
      value_set.insert(v);
      cut.value_sources_.push_back(v);
      continue;
    }
    if (n == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("depends on input values ('", v->name(), "')"));
    }
    if (IsRandom(*n)) return absl::FailedPreconditionError(absl::StrCat("uses random op ", n->Describe()));
    if (included.insert(n).second && static_cast<int>(included.size()) > max_nodes)
      return absl::FailedPreconditionError(absl::StrCat("is computed by more than ", max_nodes, " nodes"));
    if (IsShapeReader(*n)) {
      if (n->input(0) != nullptr && pattern::ConstantOf(n->input(0)) == nullptr) sources.insert(n->input(0));
      if (n->input(0) != nullptr && pattern::ConstantOf(n->input(0)) != nullptr) constants.insert(n->input(0));
      continue;
    }
    for (const Value* in : n->inputs()) stack.push_back(in);
  }

  // A value read for its data and its shape is a value input only.
  for (const Value* v : cut.value_sources_) sources.erase(v);

  // Copy the cut into a graph of its own, in the original topological order.
  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  auto g = std::make_shared<Graph>();
  for (const auto& [domain, version] : graph.opsets()) g->SetOpset(domain, version);
  absl::flat_hash_map<const Value*, Value*> map;
  for (const Value* v : cut.value_sources_) {
    Value* in = g->AddValue(v->name(), v->type(), std::nullopt);
    g->AddInput(in);
    map[v] = in;
  }
  auto mapped = [&](const Value* v) -> Value* {
    if (v == nullptr) return nullptr;
    auto it = map.find(v);
    if (it != map.end()) return it->second;
    Value* c;
    if (constants.contains(v)) {
      c = g->AddConstant(v->name(), *pattern::ConstantOf(v));
    } else {
      c = g->AddValue(v->name(), v->type(), v->shape());
    }
    map[v] = c;
    return c;
  };
  for (const Node* n : order) {
    if (!included.contains(n)) continue;
    if (sources.contains(n->input(0)) && IsShapeReader(*n) && !map.contains(n->input(0))) {
      Value* in = g->AddValue(n->input(0)->name(), n->input(0)->type(), std::nullopt);
      g->AddInput(in);
      map[n->input(0)] = in;
      cut.sources_.push_back(n->input(0));
    }
    std::vector<Value*> ins, outs;
    for (const Value* in : n->inputs()) ins.push_back(mapped(in));
    for (const Value* out : n->outputs()) outs.push_back(out == nullptr ? nullptr : mapped(out));
    g->AddNode(n->op_type(), n->domain(), n->name(), ins, outs, n->attributes());
    cut.nodes_.push_back(n);
    if (n->op_type() == "Slice" && n->domain().empty() && n->input(0) != nullptr) {
      if (const Tensor* buffer = pattern::ConstantOf(n->input(0)))
        for (int64_t d : buffer->shape()) cut.sliced_buffer_length_ = std::max(cut.sliced_buffer_length_, d);
    }
  }
  g->AddOutput(mapped(root));
  cut.graph_ = std::move(g);
  return cut;
}

absl::StatusOr<Tensor> ShapeSubgraph::Evaluate(const DimBinding& binding, const SubgraphEvaluator& evaluator,
                                               const ExecOptions& options) {
  return Evaluate(binding, evaluator, options, {});
}

absl::StatusOr<Tensor> ShapeSubgraph::Evaluate(const DimBinding& binding, const SubgraphEvaluator& evaluator,
                                               const ExecOptions& options, std::vector<Tensor> values) {
  if (values.size() != value_sources_.size())
    return absl::InvalidArgumentError(absl::StrCat("the cut reads ", value_sources_.size(), " values, ", values.size(),
                                                   " given"));
  if (prepared_ == nullptr) {
    ASSIGN_OR_RETURN(std::unique_ptr<PreparedSubgraph> prepared, evaluator.Prepare(*graph_, options));
    prepared_ = std::move(prepared);
  }
  std::vector<Tensor> inputs = std::move(values);
  for (const Value* source : sources_) {
    if (!source->shape().has_value())
      return absl::InvalidArgumentError(absl::StrCat("the shape of '", source->name(), "' is unknown"));
    auto dims = binding.Evaluate(*source->shape());
    if (!dims)
      return absl::InvalidArgumentError(absl::StrCat("the shape of '", source->name(), "' ",
                                                     SymbolicShapeToString(*source->shape()),
                                                     " has a dim the probe cannot size"));
    const ElementType type = source->type() == ElementType::kUndefined || ElementSize(source->type()) == 0
                                 ? ElementType::kFloat32
                                 : source->type();
    ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type, *dims, options.max_tensor_bytes));
    inputs.push_back(std::move(t));
  }
  ASSIGN_OR_RETURN(std::vector<Tensor> outputs, prepared_->Evaluate(std::move(inputs)));
  return outputs.at(0);
}

}  // namespace attune
