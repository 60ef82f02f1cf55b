#include "core/ir/graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune {

std::string Node::Describe() const { return absl::StrCat(EscapeControl(op_type_), " ", QuoteName(name_)); }

const Graph* Node::subgraph(std::string_view name) const {
  for (const auto& [attribute, graph] : subgraphs_)
    if (attribute == name) return graph.get();
  return nullptr;
}

std::string Graph::UniqueName(std::string_view base) const {
  std::string candidate(base.empty() ? std::string_view("v") : base);
  if (!values_by_name_.contains(candidate) && !nodes_by_name_.contains(candidate)) return candidate;
  while (true) {
    std::string next = absl::StrCat(Sv(base), "_", name_counter_.fetch_add(1, std::memory_order_relaxed) + 1);
    if (!values_by_name_.contains(next) && !nodes_by_name_.contains(next)) return next;
  }
}

Value* Graph::AddValue(std::string_view name, ElementType type, std::optional<SymbolicShape> shape) {
  auto value = std::make_unique<Value>();
  value->name_ = UniqueName(name);
  value->type_ = type;
  value->shape_ = std::move(shape);
  Value* raw = value.get();
  values_by_name_[raw->name_] = raw;
  values_.push_back(std::move(value));
  return raw;
}

Value* Graph::AddConstant(std::string_view name, Tensor tensor) {
  Value* v = AddValue(name);
  SetConstant(v, std::move(tensor));
  return v;
}

void Graph::SetConstant(Value* value, Tensor tensor) {
  value->type_ = tensor.type();
  value->shape_ = ShapeFromDims(tensor.shape());
  value->constant_ = std::move(tensor);
  value->holder_ = nullptr;
}

absl::StatusOr<Tensor> ConstantData(const Value& value) {
  if (value.constant() != nullptr) return *value.constant();
  if (value.constant_holder() != nullptr) return value.constant_holder()->Restore();
  return absl::FailedPreconditionError(absl::StrCat("value ", QuoteName(value.name()), " is not a constant"));
}

void Graph::ReleaseConstant(Value* value, std::shared_ptr<const ConstantHolder> holder) {
  value->constant_.reset();
  value->holder_ = std::move(holder);
}

void Graph::AddInput(Value* value) {
  value->is_graph_input_ = true;
  inputs_.push_back(value);
}

void Graph::AddOutput(Value* value) {
  ++value->graph_output_count_;
  outputs_.push_back(value);
}

Node* Graph::AddNode(std::string_view op_type, std::string_view domain, std::string_view name,
                     std::vector<Value*> inputs, std::vector<Value*> outputs, Attributes attributes) {
  auto node = std::make_unique<Node>();
  Node* raw = node.get();
  raw->op_type_ = std::string(op_type);
  raw->domain_ = domain == "ai.onnx" ? std::string() : std::string(domain);
  std::string base = name.empty() ? std::string(op_type) : std::string(name);
  raw->name_ = nodes_by_name_.contains(base) || values_by_name_.contains(base) ? UniqueName(base) : base;
  raw->attributes_ = std::move(attributes);
  raw->inputs_ = std::move(inputs);
  raw->outputs_ = std::move(outputs);
  for (int i = 0; i < raw->num_inputs(); ++i)
    if (raw->inputs_[i] != nullptr) raw->inputs_[i]->uses_.push_back(Use{raw, i});
  for (int i = 0; i < raw->num_outputs(); ++i) {
    if (Value* out = raw->outputs_[i]) {
      out->producer_ = raw;
      out->producer_output_ = i;
    }
  }
  nodes_by_name_[raw->name_] = raw;
  nodes_.push_back(std::move(node));
  return raw;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

int Graph::num_nodes() const { return static_cast<int>(nodes_.size()); }

Value* Graph::FindValue(std::string_view name) const {
  auto it = values_by_name_.find(std::string(name));
  return it == values_by_name_.end() ? nullptr : it->second;
}

Node* Graph::FindNode(std::string_view name) const {
  auto it = nodes_by_name_.find(std::string(name));
  return it == nodes_by_name_.end() ? nullptr : it->second;
}

absl::StatusOr<std::vector<Node*>> Graph::TopologicalOrder() const {
  // Kahn's algorithm, visiting nodes in insertion order for a stable result.
  absl::flat_hash_map<const Node*, int> pending;
  std::vector<Node*> ready;
  for (const auto& n : nodes_) {
    int count = 0;
    for (Value* in : n->inputs_)
      if (in != nullptr && in->producer_ != nullptr) ++count;
    pending[n.get()] = count;
    if (count == 0) ready.push_back(n.get());
  }
  std::vector<Node*> order;
  order.reserve(nodes_.size());
  for (size_t head = 0; head < ready.size(); ++head) {
    Node* n = ready[head];
    order.push_back(n);
    for (Value* out : n->outputs_) {
      if (out == nullptr) continue;
      for (const Use& use : out->uses_)
        if (--pending[use.node] == 0) ready.push_back(use.node);
    }
  }
  if (order.size() != nodes_.size()) {
    for (const auto& n : nodes_)
      if (pending[n.get()] > 0)
        return absl::InvalidArgumentError(absl::StrCat("graph has a cycle through node ", n->Describe()));
  }
  return order;
}

void Graph::ReplaceAllUsesWith(Value* from, Value* to) {
  if (from == to) return;
  std::vector<Use> uses = from->uses_;
  for (const Use& use : uses) SetNodeInput(use.node, use.index, to);
  for (Value*& out : outputs_) {
    if (out == from) {
      --from->graph_output_count_;
      ++to->graph_output_count_;
      out = to;
    }
  }
}

void Graph::SetNodeInput(Node* node, int index, Value* value) {
  if (index >= node->num_inputs()) node->inputs_.resize(index + 1, nullptr);
  Value* old = node->inputs_[index];
  if (old != nullptr) {
    auto& uses = old->uses_;
    uses.erase(std::find(uses.begin(), uses.end(), Use{node, index}));
  }
  node->inputs_[index] = value;
  if (value != nullptr) value->uses_.push_back(Use{node, index});
}

absl::Status Graph::RemoveNode(Node* node) {
  for (Value* out : node->outputs_) {
    if (out != nullptr && (!out->uses_.empty() || out->is_graph_output()))
      return absl::FailedPreconditionError(
          absl::StrCat("cannot remove ", node->Describe(), ": output ", QuoteName(out->name_), " is still used"));
  }
  Detach(node);
  return absl::OkStatus();
}

void Graph::Detach(Node* node) {
  for (int i = 0; i < node->num_inputs(); ++i) SetNodeInput(node, i, nullptr);
  for (Value* out : node->outputs_) {
    if (out == nullptr) continue;
    out->producer_ = nullptr;
    out->producer_output_ = -1;
  }
  nodes_by_name_.erase(node->name_);
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& p) { return p.get() == node; });
  nodes_.erase(it);
}

Node* Graph::ReplaceNode(Node* node, std::string_view op_type, std::string_view domain, std::vector<Value*> inputs,
                         Attributes attributes) {
  const std::string name = node->name_;
  std::vector<Value*> outputs = node->outputs_;
  Detach(node);
  return AddNode(op_type, domain, name, std::move(inputs), std::move(outputs), std::move(attributes));
}

Node* Graph::ReplaceNode(Node* node, std::string_view op_type, std::string_view domain, std::vector<Value*> inputs,
                         std::vector<Value*> outputs, Attributes attributes) {
  const std::string name = node->name_;
  Detach(node);
  return AddNode(op_type, domain, name, std::move(inputs), std::move(outputs), std::move(attributes));
}

int Graph::RemoveDeadNodes() {
  int removed = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    auto order = TopologicalOrder();
    std::vector<Node*> nodes = order.ok() ? *order : this->nodes();
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      Node* n = *it;
      bool needed = false;
      for (Value* out : n->outputs_)
        if (out != nullptr && (!out->uses_.empty() || out->is_graph_output())) needed = true;
      if (!needed && RemoveNode(n).ok()) {
        ++removed;
        changed = true;
      }
    }
  }
  // Drop values nothing refers to any more.
  std::vector<std::unique_ptr<Value>> kept;
  for (auto& v : values_) {
    if (v->producer_ == nullptr && v->uses_.empty() && !v->is_graph_input_ && !v->is_graph_output()) {
      values_by_name_.erase(v->name_);
      continue;
    }
    kept.push_back(std::move(v));
  }
  values_ = std::move(kept);
  return removed;
}

absl::Status Graph::Verify() const {
  absl::flat_hash_set<const Value*> known;
  for (const auto& v : values_) known.insert(v.get());
  for (const auto& n : nodes_) {
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Value* in = n->inputs_[i];
      if (in == nullptr) continue;
      if (!known.contains(in))
        return absl::InternalError(absl::StrCat(n->Describe(), " input ", i, " is not a value of this graph"));
      if (std::find(in->uses_.begin(), in->uses_.end(), Use{n.get(), i}) == in->uses_.end())
        return absl::InternalError(absl::StrCat(n->Describe(), " input ", QuoteName(in->name_), " lacks its use edge"));
      if (in->producer_ == nullptr && !in->is_constant() && !in->is_graph_input_)
        return absl::InvalidArgumentError(absl::StrCat(n->Describe(), " reads ", QuoteName(in->name_),
                                                       ", which no node, input or initializer produces"));
    }
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Value* out = n->outputs_[i];
      if (out != nullptr && (out->producer_ != n.get() || out->producer_output_ != i))
        return absl::InternalError(
            absl::StrCat(n->Describe(), " output ", QuoteName(out->name_), " has another producer"));
    }
  }
  for (const Value* out : outputs_) {
    if (out->producer_ == nullptr && !out->is_constant() && !out->is_graph_input_)
      return absl::InvalidArgumentError(absl::StrCat("graph output ", QuoteName(out->name_), " is never produced"));
  }
  auto order = TopologicalOrder();
  return order.ok() ? absl::OkStatus() : order.status();
}

void Graph::SetOpset(std::string_view domain, int version) {
  opsets_[domain == "ai.onnx" ? std::string() : std::string(domain)] = version;
}

void Graph::RemoveOpset(std::string_view domain) { opsets_.erase(std::string(domain)); }

int Graph::OpsetFor(std::string_view domain) const {
  auto it = opsets_.find(domain == "ai.onnx" ? std::string() : std::string(domain));
  return it == opsets_.end() ? 0 : it->second;
}

std::unique_ptr<Graph> Graph::Clone() const {
  auto g = std::make_unique<Graph>();
  absl::flat_hash_map<const Value*, Value*> map;
  for (const auto& v : values_) {
    Value* c = g->AddValue(v->name_, v->type_, v->shape_);
    c->constant_ = v->constant_;
    c->holder_ = v->holder_;
    map[v.get()] = c;
  }
  for (Value* in : inputs_) g->AddInput(map[in]);
  auto order = TopologicalOrder();
  const std::vector<Node*> nodes = order.ok() ? *order : this->nodes();
  for (const Node* n : nodes) {
    std::vector<Value*> ins, outs;
    for (Value* v : n->inputs_) ins.push_back(v ? map[v] : nullptr);
    for (Value* v : n->outputs_) outs.push_back(v ? map[v] : nullptr);
    Node* copy = g->AddNode(n->op_type_, n->domain_, n->name_, ins, outs, n->attributes_);
    copy->subgraphs_ = n->subgraphs_;
  }
  for (Value* out : outputs_) g->AddOutput(map[out]);
  g->opsets_ = opsets_;
  g->producer_name = producer_name;
  g->producer_version = producer_version;
  g->graph_name = graph_name;
  g->ir_version = ir_version;
  g->outer_scope_inputs = outer_scope_inputs;
  g->metadata = metadata;
  return g;
}

}  // namespace attune
