// GraphBuilder: a few lines to write a test graph with the Graph API, and
// RunGraph to execute it through a Plan.
//
//   GraphBuilder b;                                   // opset 17 for ai.onnx
//   Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", 64}));
//   Value* w = b.Constant("w", Ones({64, 64}));       // any attune::Tensor
//   Value* y = b.Node("MatMul", {x, w});              // one output, named after the node
//   Value* t = b.Node("Transpose", {y}, Attrs({{"perm", std::vector<int64_t>{1, 0, 2}}}));
//   auto parts = b.Nodes("Split", {t}, 2, Attrs({{"axis", int64_t{2}}}));   // several outputs
//   b.Output(parts[0]);
//   Graph& g = b.graph();                             // or b.Build() to take ownership
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "core/ir/graph.h"
#include "ops/registry.h"

namespace attune::testing {

/// One dim of a test shape: a number or a symbol name.
struct DimSpec {
  DimSpec(int64_t value) : dim(Dim::Known(value)) {}  // NOLINT: implicit on purpose
  DimSpec(int value) : dim(Dim::Known(value)) {}      // NOLINT
  DimSpec(const char* symbol) : dim(Dim::Symbol(symbol)) {}  // NOLINT
  Dim dim;
};
/// Dims({"batch", "seq", 768}) -> a SymbolicShape.
SymbolicShape Dims(std::initializer_list<DimSpec> dims);

/// Attrs({{"axis", int64_t{0}}, {"perm", std::vector<int64_t>{0, 2, 1, 3}}}).
Attributes Attrs(std::initializer_list<std::pair<std::string, AttributeValue>> attributes);

/// Tensors for constants.
Tensor Int64s(const std::vector<int64_t>& values);                      // 1-D int64
Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& values);
template <typename T>
Tensor ScalarOf(T value) { return Tensor::Scalar<T>(value); }

class GraphBuilder {
 public:
  /// `opset` is the ai.onnx opset import; others via graph().SetOpset.
  explicit GraphBuilder(int opset = 17);

  /// A graph input with an element type and (possibly symbolic) shape.
  Value* Input(const std::string& name, ElementType type, SymbolicShape shape);
  /// A constant (initializer).
  Value* Constant(const std::string& name, Tensor tensor);
  /// A node with one output; the output value is named "<node name>_out"
  /// (the node name defaults to the op type, made unique).
  Value* Node(const std::string& op_type, std::vector<Value*> inputs, Attributes attributes = {},
              const std::string& name = "", const std::string& domain = "");
  /// A node with `num_outputs` outputs.
  std::vector<Value*> Nodes(const std::string& op_type, std::vector<Value*> inputs, int num_outputs,
                            Attributes attributes = {}, const std::string& name = "", const std::string& domain = "");
  /// Marks a graph output.
  void Output(Value* value);

  Graph& graph() { return *graph_; }
  /// Hands over the graph; the builder must not be used afterwards.
  std::unique_ptr<Graph> Build() { return std::move(graph_); }

 private:
  std::unique_ptr<Graph> graph_;
};

/// Compiles `graph` with `registry` and runs it once on `inputs` (graph-input order).
absl::StatusOr<std::vector<Tensor>> RunGraph(const Graph& graph, const KernelRegistry& registry,
                                             std::vector<Tensor> inputs);

/// Number of live nodes of an op type.
int CountOps(const Graph& graph, const std::string& op_type);

}  // namespace attune::testing
