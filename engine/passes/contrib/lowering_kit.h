// What the lowerings of ONNX Runtime's vendor ops share: a builder that
// writes standard or attune ops in the place of one vendor node, and the
// checks that turn a malformed node into one line naming node, op and tensor.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "core/ir/graph.h"
#include "engine/passes/pass.h"

namespace attune::contrib {

inline constexpr char kMsDomain[] = "com.microsoft";

/// Writes the nodes that replace one vendor node. New values are named after
/// it, so a failure in a lowered op still points at the node the file has.
class Lowering {
 public:
  Lowering(Graph& graph, Node* node) : graph_(graph), node_(node) {}

  Graph& graph() { return graph_; }
  Node* node() const { return node_; }
  /// Input i, or nullptr when absent (an empty name or a shorter list).
  Value* input(int i) const { return node_->input(i); }
  /// Output i when some reader or the graph needs it, else nullptr.
  Value* wanted_output(int i) const;

  /// A new node op(inputs) with one new output value of `type`.
  Value* Add(const std::string& op, std::vector<Value*> inputs, Attributes attributes = {},
             ElementType type = ElementType::kUndefined, const std::string& domain = std::string());
  /// A new node op(inputs) with `count` new output values of `type`.
  std::vector<Value*> AddMulti(const std::string& op, std::vector<Value*> inputs, int count, Attributes attributes = {},
                               ElementType type = ElementType::kUndefined, const std::string& domain = std::string());
  /// A constant named after the node.
  Value* Constant(const std::string& tag, Tensor tensor);
  Value* Int64s(const std::string& tag, const std::vector<int64_t>& values);
  Value* FloatScalar(const std::string& tag, float value);

  /// The vendor node's output `i` is `replacement` from now on.
  void Forward(int i, Value* replacement);
  /// Removes the vendor node (after its outputs were forwarded or taken over)
  /// and records the mapping in the report.
  absl::Status Finish(PassContext& context, std::string written_as, std::string details = "");

  /// "node 'n' (com.microsoft.Op): " for errors.
  std::string Where() const;
  absl::Status Invalid(const std::string& what) const;
  absl::Status Unsupported(const std::string& what) const;

 private:
  std::string Base(const std::string& tag) const;

  Graph& graph_;
  Node* node_;
  std::vector<std::string> written_;
  std::vector<std::pair<Value*, Value*>> forwards_;
};

/// Attribute readers that name the node on failure.
absl::StatusOr<int64_t> IntAttr(const Lowering& l, const std::string& name, int64_t default_value);
absl::StatusOr<float> FloatAttr(const Lowering& l, const std::string& name, float default_value);
/// Refuses an attribute the lowering does not know (a newer contract).
absl::Status CheckKnownAttributes(const Lowering& l, const std::vector<std::string>& known);
/// Refuses more inputs or outputs than the contract has, or a missing required input.
absl::Status CheckArity(const Lowering& l, int required_inputs, int max_inputs, int max_outputs);

/// The rank of v's shape when known, else -1.
int Rank(const Value* v);
/// A constant dim of v's shape, or -1.
int64_t StaticDim(const Value* v, int axis);

}  // namespace attune::contrib
