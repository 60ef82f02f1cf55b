#include "engine/rewrite/shape_subgraph.h"

#include <algorithm>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

namespace {

uint64_t HashBytes(const void* data, size_t n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

std::string TensorText(const Tensor& t) {
  return absl::StrCat(ElementTypeName(t.type()), ShapeToString(t.shape()), "#",
                      t.type() == ElementType::kString ? 0 : HashBytes(t.raw_data(), t.byte_size()));
}

std::string AttributeText(const AttributeValue& v) {
  struct Visitor {
    std::string operator()(int64_t x) const { return absl::StrCat("i", x); }
    std::string operator()(float x) const { return absl::StrCat("f", HashBytes(&x, sizeof(x))); }
    std::string operator()(const std::string& x) const { return absl::StrCat("s", x.size(), ":", x); }
    std::string operator()(const Tensor& x) const { return TensorText(x); }
    std::string operator()(const std::vector<int64_t>& x) const { return absl::StrCat("I", absl::StrJoin(x, ",")); }
    std::string operator()(const std::vector<float>& x) const {
      return absl::StrCat("F", HashBytes(x.data(), x.size() * sizeof(float)));
    }
    std::string operator()(const std::vector<std::string>& x) const {
      std::string out = "S";
      for (const std::string& e : x) absl::StrAppend(&out, e.size(), ":", e);
      return out;
    }
  };
  return std::visit(Visitor{}, v);
}

std::string RenamedShape(const std::optional<SymbolicShape>& shape, std::vector<std::string>& symbols) {
  if (!shape.has_value()) return "?";
  std::string out = "[";
  for (const Dim& d : *shape) absl::StrAppend(&out, RenamedDim(d, symbols), ",");
  return out + "]";
}

}  // namespace

std::string RenamedDim(const Dim& d, std::vector<std::string>& symbols) {
  if (d.is_known()) return absl::StrCat(d.value());
  if (!d.is_symbol()) return "?";
  // The expression with each name replaced by its index of first appearance.
  return d.expr()->ToString([&](const std::string& name) {
    auto it = std::find(symbols.begin(), symbols.end(), name);
    std::string index = absl::StrCat("$", it - symbols.begin());
    if (it == symbols.end()) symbols.push_back(name);
    return index;
  });
}

std::string ShapeSubgraph::Fingerprint(std::vector<std::string>& symbols) const {
  absl::flat_hash_map<const Value*, std::string> refs;
  std::string out;
  for (size_t i = 0; i < graph_->inputs().size(); ++i) {
    const Value* in = graph_->inputs()[i];
    refs[in] = absl::StrCat("in", i);
    const bool value_source = i < value_sources_.size();
    const Value* original = value_source ? value_sources_[i] : sources_[i - value_sources_.size()];
    absl::StrAppend(&out, value_source ? "V" : "S", ElementTypeName(original->type()),
                    RenamedShape(original->shape(), symbols), ";");
  }
  int k = 0;
  for (const Node* n : graph_->nodes()) {
    absl::StrAppend(&out, n->domain(), ".", n->op_type(), "(");
    for (const Value* in : n->inputs()) {
      if (in == nullptr) {
        out += "_,";
        continue;
      }
      auto it = refs.find(in);
      if (it == refs.end() && in->constant() != nullptr) it = refs.emplace(in, TensorText(*in->constant())).first;
      absl::StrAppend(&out, it != refs.end() ? it->second : "?", ",");
    }
    out += "){";
    for (const auto& [name, value] : n->attributes().all()) absl::StrAppend(&out, name, "=", AttributeText(value), ";");
    out += "}";
    for (size_t o = 0; o < n->outputs().size(); ++o)
      if (n->output(o) != nullptr) refs[n->output(o)] = absl::StrCat("n", k, ".", o);
    ++k;
  }
  absl::StrAppend(&out, "->", refs.count(graph_->outputs()[0]) ? refs[graph_->outputs()[0]] : "?");
  return out;
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
