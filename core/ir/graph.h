// The graph IR: a Graph owns Nodes and Values; every edit goes through Graph's
// methods so that producer/consumer links never dangle.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "core/ir/constant_holder.h"
#include "core/ir/dim.h"

namespace attune {

class Node;
class Graph;

/// One consumer edge: `node` reads the value as its input `index`.
struct Use {
  Node* node;
  int index;
  bool operator==(const Use&) const = default;
};

/// A tensor-valued edge: produced by at most one node (or a graph input or a
/// constant), consumed by any number of node inputs and graph outputs.
class Value {
 public:
  const std::string& name() const { return name_; }
  Node* producer() const { return producer_; }
  int producer_output() const { return producer_output_; }
  const std::vector<Use>& uses() const { return uses_; }

  ElementType type() const { return type_; }
  void set_type(ElementType type) { type_ = type; }
  /// The symbolic shape, or nullopt when even the rank is unknown.
  const std::optional<SymbolicShape>& shape() const { return shape_; }
  void set_shape(std::optional<SymbolicShape> shape) { shape_ = std::move(shape); }

  /// Constant data (initializer or folded constant), or nullptr; nullptr too
  /// for a released constant, whose data constant_holder() keeps.
  const Tensor* constant() const { return constant_ ? &*constant_ : nullptr; }
  /// Whether the value is a constant, its data here or released.
  bool is_constant() const { return constant_.has_value() || holder_ != nullptr; }
  /// The holder of a released constant's data, or nullptr.
  const std::shared_ptr<const ConstantHolder>& constant_holder() const { return holder_; }
  bool is_graph_input() const { return is_graph_input_; }
  bool is_graph_output() const { return graph_output_count_ > 0; }

 private:
  friend class Graph;
  std::string name_;
  Node* producer_ = nullptr;
  int producer_output_ = -1;
  std::vector<Use> uses_;
  ElementType type_ = ElementType::kUndefined;
  std::optional<SymbolicShape> shape_;
  std::optional<Tensor> constant_;
  std::shared_ptr<const ConstantHolder> holder_;  // set once constant_ is released
  bool is_graph_input_ = false;
  int graph_output_count_ = 0;
};

/// A constant value's data: its tensor, or the tensor restored from its
/// holder when released (a copy, for export). FailedPrecondition for a value
/// that is not a constant.
absl::StatusOr<Tensor> ConstantData(const Value& value);

/// A node's subgraph attributes (If's then_branch and else_branch, Loop's
/// and Scan's body), by attribute name. A subgraph is read-only once
/// imported: passes treat its node as opaque, and clones share it.
using Subgraphs = std::vector<std::pair<std::string, std::shared_ptr<const Graph>>>;

/// One operator application.
class Node {
 public:
  const std::string& name() const { return name_; }
  const std::string& op_type() const { return op_type_; }
  /// "" for the default ONNX domain.
  const std::string& domain() const { return domain_; }
  /// Inputs in order; nullptr for an omitted optional input.
  const std::vector<Value*>& inputs() const { return inputs_; }
  /// Outputs in order; nullptr for an omitted optional output.
  const std::vector<Value*>& outputs() const { return outputs_; }
  Value* input(int i) const { return i < static_cast<int>(inputs_.size()) ? inputs_[i] : nullptr; }
  Value* output(int i) const { return i < static_cast<int>(outputs_.size()) ? outputs_[i] : nullptr; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  const Attributes& attributes() const { return attributes_; }
  Attributes& mutable_attributes() { return attributes_; }
  const Subgraphs& subgraphs() const { return subgraphs_; }
  /// The subgraph held by attribute `name`, or nullptr.
  const Graph* subgraph(std::string_view name) const;
  bool has_subgraphs() const { return !subgraphs_.empty(); }
  void AddSubgraph(std::string name, std::shared_ptr<const Graph> graph) {
    subgraphs_.emplace_back(std::move(name), std::move(graph));
  }
  /// "Softmax 'node_name'" for error messages.
  std::string Describe() const;

 private:
  friend class Graph;
  std::string name_;
  std::string op_type_;
  std::string domain_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  Attributes attributes_;
  Subgraphs subgraphs_;
  bool removed_ = false;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  /// A deep copy (nodes, values, constants shared by buffer).
  std::unique_ptr<Graph> Clone() const;

  // ---- building ----
  /// A new value with a unique name (`name` is made unique if taken).
  Value* AddValue(std::string_view name, ElementType type = ElementType::kUndefined,
                  std::optional<SymbolicShape> shape = std::nullopt);
  /// A new constant value holding `tensor`.
  Value* AddConstant(std::string_view name, Tensor tensor);
  /// Marks a value as a graph input (appended to inputs()).
  void AddInput(Value* value);
  /// Appends a graph output.
  void AddOutput(Value* value);
  /// Adds a node; each output value must not have a producer yet.
  Node* AddNode(std::string_view op_type, std::string_view domain, std::string_view name,
                std::vector<Value*> inputs, std::vector<Value*> outputs, Attributes attributes = {});

  // ---- looking ----
  const std::vector<Value*>& inputs() const { return inputs_; }
  const std::vector<Value*>& outputs() const { return outputs_; }
  /// Live nodes in insertion order (not necessarily topological).
  std::vector<Node*> nodes() const;
  int num_nodes() const;
  Value* FindValue(std::string_view name) const;
  Node* FindNode(std::string_view name) const;
  /// Live nodes in a topological order; FailedPrecondition naming a node on a cycle.
  absl::StatusOr<std::vector<Node*>> TopologicalOrder() const;

  // ---- editing ----
  /// Points every consumer (and graph output) of `from` at `to`.
  void ReplaceAllUsesWith(Value* from, Value* to);
  /// Rewires input `index` of `node` to `value` (may be nullptr).
  void SetNodeInput(Node* node, int index, Value* value);
  /// Turns a value into a constant (its producer, if any, must be removed by the caller).
  void SetConstant(Value* value, Tensor tensor);
  /// Drops a constant's data, which `holder` keeps from now on; the value
  /// stays a constant of the same type and shape.
  void ReleaseConstant(Value* value, std::shared_ptr<const ConstantHolder> holder);
  /// Removes a node whose outputs have no uses and are not graph outputs.
  absl::Status RemoveNode(Node* node);
  /// Puts a node of another op on `inputs` in the place of `node`: it takes
  /// node's name and produces the same output values (uses, graph outputs kept).
  Node* ReplaceNode(Node* node, std::string_view op_type, std::string_view domain, std::vector<Value*> inputs,
                    Attributes attributes = {});
  /// The same producing only `outputs`, some of node's outputs: the others
  /// are left without a producer, for other nodes to produce.
  Node* ReplaceNode(Node* node, std::string_view op_type, std::string_view domain, std::vector<Value*> inputs,
                    std::vector<Value*> outputs, Attributes attributes);
  /// Removes nodes whose outputs nobody needs, repeatedly; returns how many.
  int RemoveDeadNodes();
  /// Checks links both ways, unique names, single producers, no cycles.
  absl::Status Verify() const;

  // ---- metadata ----
  /// Opset per domain ("" = ai.onnx).
  const std::map<std::string, int>& opsets() const { return opsets_; }
  void SetOpset(std::string_view domain, int version);
  /// Drops a domain's opset import (once no node of the domain is left).
  void RemoveOpset(std::string_view domain);
  /// The opset for a domain, or 0 when the model does not import it.
  int OpsetFor(std::string_view domain) const;
  /// A node or value name not used yet, built from `base`. Safe to call from
  /// several threads at once (concurrent calls get different suffixes).
  std::string UniqueName(std::string_view base) const;

  std::string producer_name;
  std::string producer_version;
  std::string graph_name;
  int64_t ir_version = 0;
  /// For a subgraph: how many of inputs(), at the end, stand for values of the
  /// enclosing graph that it reads (outer scope). They are bound, in order, to
  /// the last inputs of the node that owns the subgraph, so that those values
  /// are inputs of that node for every pass (kept alive, renamed, replaced).
  int outer_scope_inputs = 0;
  /// Free-form model metadata (ONNX metadata_props).
  std::map<std::string, std::string> metadata;

 private:
  // Unlinks a node from its inputs, outputs and the node lists, and deletes it.
  void Detach(Node* node);

  std::vector<std::unique_ptr<Node>> nodes_;
  std::vector<std::unique_ptr<Value>> values_;
  std::vector<Value*> inputs_;
  std::vector<Value*> outputs_;
  absl::flat_hash_map<std::string, Value*> values_by_name_;
  absl::flat_hash_map<std::string, Node*> nodes_by_name_;
  std::map<std::string, int> opsets_;
  // UniqueName is const and reachable from readers that share the graph
  // (SaveOptimizedModel on a session other threads run): the counter is atomic.
  mutable std::atomic<int64_t> name_counter_{0};
};

}  // namespace attune
