// What a per-op shape rule sees and writes: the facts known about each input
// (type, symbolic shape, constant data, and the symbolic contents of small
// integer tensors such as Shape outputs) and the facts it infers per output.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "core/ir/dim.h"
#include "core/ir/graph.h"

namespace attune {

/// Small integer or bool tensors (Shape outputs, Reshape targets) get their
/// elements tracked symbolically up to this many elements.
inline constexpr int64_t kMaxTrackedElements = 64;

/// What is known about one value.
struct ValueFacts {
  ElementType type = ElementType::kUndefined;
  /// nullopt: even the rank is unknown.
  std::optional<SymbolicShape> shape;
  /// The value's constant data, if it is a constant.
  const Tensor* constant = nullptr;
  /// For a small integer/bool tensor of static shape: its elements in
  /// row-major order, each a number or a symbolic dim (e.g. Shape(x) of
  /// x[batch, seq, 768] holds {batch, seq, 768}).
  std::optional<std::vector<Dim>> data;
  /// For a one-element float tensor cast from a tracked integer (Falcon's
  /// rotary cache: arange(float(seq))): that integer. Only Range reads it; no
  /// arithmetic is carried on it, since float Div is not integer Div.
  std::optional<Dim> integer_before_cast;

  int64_t rank() const { return shape ? static_cast<int64_t>(shape->size()) : -1; }
};

/// Facts of a constant tensor (data filled when it is small and integral).
ValueFacts FactsOfConstant(const Tensor& tensor);

class ShapeContext {
 public:
  /// `inputs` has one entry per node input (nullptr for an omitted one).
  ShapeContext(const Node& node, int opset, std::vector<const ValueFacts*> inputs);

  const Node& node() const { return node_; }
  int opset() const { return opset_; }
  const Attributes& attrs() const { return node_.attributes(); }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs_[i] != nullptr; }
  /// The facts of input i; an empty ValueFacts when it is omitted.
  const ValueFacts& input(int i) const;
  ValueFacts& output(int i) { return outputs_[i]; }
  std::vector<ValueFacts>& outputs() { return outputs_; }

  /// A symbol standing for dim `dim` of output `output` when no rule can name
  /// it; deterministic, so re-running inference gives the same name.
  Dim FreshDim(int output, int dim) const;

  /// Integer contents of input i when fully known (constant, or tracked data
  /// with every element a number).
  std::optional<std::vector<int64_t>> InputInts(int i) const;
  /// Symbolic contents of input i when tracked (constants included).
  std::optional<std::vector<Dim>> InputData(int i) const;
  /// Axes from the attribute `name` (older opsets) or from input `input_index`
  /// (newer ones), chosen by `input_since_opset`. nullopt: not known;
  /// an empty vector: none given.
  std::optional<std::vector<int64_t>> AxesFrom(std::string_view name, int input_index, int input_since_opset) const;

 private:
  const Node& node_;
  int opset_;
  std::vector<const ValueFacts*> inputs_;
  std::vector<ValueFacts> outputs_;
};

/// A shape rule fills ctx.output(i) for the outputs it can infer. A non-OK
/// status means the node is invalid as far as the rule can tell; inference
/// then leaves the outputs alone (the kernel reports the error at run time).
using ShapeRule = absl::Status (*)(ShapeContext& ctx);

/// The rule for an op, or nullptr when there is none.
ShapeRule FindShapeRule(std::string_view domain, std::string_view op_type);

/// Runs the rule for one node; returns nullopt when there is no rule or it failed.
std::optional<std::vector<ValueFacts>> InferNodeFacts(const Node& node, int opset,
                                                      std::vector<const ValueFacts*> inputs);

}  // namespace attune
