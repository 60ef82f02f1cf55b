#include "tests/common/graph_builder.h"

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/exec/plan.h"

namespace attune::testing {

SymbolicShape Dims(std::initializer_list<DimSpec> dims) {
  SymbolicShape shape;
  for (const DimSpec& d : dims) shape.push_back(d.dim);
  return shape;
}

Attributes Attrs(std::initializer_list<std::pair<std::string, AttributeValue>> attributes) {
  Attributes out;
  for (const auto& [name, value] : attributes) out.Set(name, value);
  return out;
}

Tensor Int64s(const std::vector<int64_t>& values) {
  return *Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values);
}

Tensor Floats(std::vector<int64_t> shape, const std::vector<float>& values) {
  return *Tensor::FromVector<float>(std::move(shape), values);
}

GraphBuilder::GraphBuilder(int opset) : graph_(std::make_unique<Graph>()) { graph_->SetOpset("", opset); }

Value* GraphBuilder::Input(const std::string& name, ElementType type, SymbolicShape shape) {
  Value* v = graph_->AddValue(name, type, std::move(shape));
  graph_->AddInput(v);
  return v;
}

Value* GraphBuilder::Constant(const std::string& name, Tensor tensor) { return graph_->AddConstant(name, std::move(tensor)); }

Value* GraphBuilder::Node(const std::string& op_type, std::vector<Value*> inputs, Attributes attributes,
                          const std::string& name, const std::string& domain) {
  return Nodes(op_type, std::move(inputs), 1, std::move(attributes), name, domain)[0];
}

std::vector<Value*> GraphBuilder::Nodes(const std::string& op_type, std::vector<Value*> inputs, int num_outputs,
                                        Attributes attributes, const std::string& name, const std::string& domain) {
  const std::string node_name = graph_->UniqueName(name.empty() ? op_type : name);
  std::vector<Value*> outputs;
  for (int i = 0; i < num_outputs; ++i)
    outputs.push_back(graph_->AddValue(num_outputs == 1 ? absl::StrCat(node_name, "_out")
                                                        : absl::StrCat(node_name, "_out", i)));
  graph_->AddNode(op_type, domain, node_name, std::move(inputs), outputs, std::move(attributes));
  return outputs;
}

void GraphBuilder::Output(Value* value) { graph_->AddOutput(value); }

absl::StatusOr<std::vector<Tensor>> RunGraph(const Graph& graph, const KernelRegistry& registry,
                                             std::vector<Tensor> inputs) {
  ExecOptions options;
  options.threads = 1;
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Plan::Compile(graph, registry, options));
  return plan->Run(std::move(inputs));
}

int CountOps(const Graph& graph, const std::string& op_type) {
  int n = 0;
  for (const attune::Node* node : graph.nodes()) n += node->op_type() == op_type;
  return n;
}

}  // namespace attune::testing
