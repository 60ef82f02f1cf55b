// Constant folding: a node whose inputs are all known at compile time runs
// once, through its own kernel, and its outputs become constants.
#include "engine/passes/constant_folding.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/log.h"
#include "core/common/status_macros.h"
#include "engine/passes/graph_edits.h"
#include "engine/passes/passes.h"
#include "engine/passes/shape_rules/shape_context.h"
#include "ops/run_node.h"

namespace attune {
namespace {

bool IsNondeterministic(const Node& node) {
  static const char* kRandom[] = {"RandomNormal", "RandomUniform", "RandomNormalLike", "RandomUniformLike",
                                  "Multinomial", "Bernoulli"};
  if (!node.domain().empty()) return false;
  for (const char* op : kRandom)
    if (node.op_type() == op) return true;
  return false;
}

// Ops whose output reuses the input buffer: folding them adds no data.
bool ReinterpretsBuffer(const Node& node) {
  static const char* kOps[] = {"Identity", "Reshape", "Squeeze", "Unsqueeze", "Flatten"};
  if (!node.domain().empty()) return false;
  for (const char* op : kOps)
    if (node.op_type() == op) return true;
  return false;
}

// Training-mode Dropout is random; inference Dropout is the identity.
bool IsTrainingDropout(const Node& node) {
  if (node.op_type() != "Dropout" || !node.domain().empty()) return false;
  const Value* mode = node.input(2);
  if (mode == nullptr) return false;
  const Tensor* t = mode->constant();
  return t == nullptr || t->type() != ElementType::kBool || t->num_elements() != 1 || *t->data<bool>();
}

// Shape/Size of a value whose shape is static need no kernel and no data.
std::optional<Tensor> FoldShapeOp(const Graph& graph, const Node& node) {
  if (!node.domain().empty() || (node.op_type() != "Shape" && node.op_type() != "Size")) return std::nullopt;
  const Value* in = node.input(0);
  if (in == nullptr || !in->shape() || !IsStatic(*in->shape())) return std::nullopt;
  const std::vector<int64_t> dims = StaticDims(*in->shape());
  if (node.op_type() == "Size") {
    int64_t n = 1;
    for (int64_t d : dims)
      if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
    return Tensor::Scalar<int64_t>(n);
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t start = 0, end = rank;
  if (graph.OpsetFor("") >= 15) {
    auto s = node.attributes().GetInt("start", 0);
    auto e = node.attributes().GetInt("end", rank);
    if (!s.ok() || !e.ok()) return std::nullopt;
    start = std::clamp<int64_t>(*s < 0 ? *s + rank : *s, 0, rank);
    end = std::clamp<int64_t>(*e < 0 ? *e + rank : *e, 0, rank);
  }
  return Int64Vector(std::vector<int64_t>(dims.begin() + start, dims.begin() + std::max(start, end)));
}

// Constant nodes from their attribute; nullopt for forms left to the kernel.
std::optional<Tensor> FoldConstantNode(const Node& node) {
  if (!node.domain().empty() || node.op_type() != "Constant") return std::nullopt;
  const Attributes& a = node.attributes();
  if (a.Has("value")) {
    auto t = a.GetTensor("value");
    return t.ok() ? std::optional<Tensor>(*t) : std::nullopt;
  }
  if (a.Has("value_float")) {
    auto v = a.GetFloat("value_float");
    return v.ok() ? std::optional<Tensor>(Tensor::Scalar<float>(*v)) : std::nullopt;
  }
  if (a.Has("value_int")) {
    auto v = a.GetInt("value_int");
    return v.ok() ? std::optional<Tensor>(Tensor::Scalar<int64_t>(*v)) : std::nullopt;
  }
  if (a.Has("value_floats")) {
    auto v = a.GetFloats("value_floats");
    if (!v.ok()) return std::nullopt;
    return *Tensor::FromVector<float>({static_cast<int64_t>(v->size())}, *v);
  }
  if (a.Has("value_ints")) {
    auto v = a.GetInts("value_ints");
    return v.ok() ? std::optional<Tensor>(Int64Vector(*v)) : std::nullopt;
  }
  return std::nullopt;
}

class ConstantFoldingPass final : public Pass {
 public:
  explicit ConstantFoldingPass(const ConstantFoldingOptions& options) : options_(options) {}
  std::string_view name() const override { return "constant_folding"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    bool changed = false;
    for (Node* node : order) {
      auto folded = Fold(graph, *node, context);
      if (!folded) continue;
      RETURN_IF_ERROR(ReplaceNodeWithConstants(graph, node, *std::move(folded)));
      changed = true;
    }
    return changed;
  }

 private:
  // The node's outputs if it can and should be folded, else nullopt.
  std::optional<std::vector<Tensor>> Fold(const Graph& graph, const Node& node, const PassContext& context) const {
    if (node.num_outputs() == 0 || IsNondeterministic(node) || IsTrainingDropout(node)) return std::nullopt;
    if (node.has_subgraphs()) return std::nullopt;  // control flow is opaque to the passes
    if (auto t = FoldConstantNode(node)) return std::vector<Tensor>{*t};
    if (auto t = FoldShapeOp(graph, node)) return std::vector<Tensor>{*t};

    std::vector<Tensor> inputs;
    int64_t freed_bytes = 0;
    for (const Value* in : node.inputs()) {
      if (in == nullptr) {
        inputs.emplace_back();
        continue;
      }
      if (in->constant() == nullptr) return std::nullopt;  // released constants are not folded
      inputs.push_back(*in->constant());
      const bool only_reader = !in->is_graph_output() && std::all_of(in->uses().begin(), in->uses().end(),
                                                                     [&](const Use& u) { return u.node == &node; });
      if (only_reader) freed_bytes += static_cast<int64_t>(in->constant()->byte_size());
    }
    if (context.registry == nullptr) return std::nullopt;
    const int opset = KernelOpsetFor(graph, node);
    if (!context.registry->Supports(node.domain(), node.op_type(), opset)) return std::nullopt;

    const bool exempt = ReinterpretsBuffer(node);
    const int64_t budget = options_.max_added_bytes + freed_bytes;
    if (!exempt && PredictedOutputBytes(node, opset, inputs) > budget) return std::nullopt;

    RunNodeOptions run;
    run.exec = context.exec_options;
    run.exec.threads = 1;
    if (!exempt) run.exec.max_tensor_bytes = std::min(run.exec.max_tensor_bytes, budget);
    auto outputs = RunNode(node, opset, inputs, *context.registry, run);
    if (!outputs.ok()) {
      // Not fatal: the node stays, and running it reports the error.
      const Logger& log = context.exec_options.logger;
      if (log.Enabled(LogLevel::kDebug))
        log.Log(LogLevel::kDebug,
                absl::StrCat("constant_folding: not folding ", node.Describe(), ": ", outputs.status().ToString()));
      return std::nullopt;
    }
    int64_t total = 0;
    for (const Tensor& t : *outputs) total += static_cast<int64_t>(t.byte_size());
    if (!exempt && total > budget) return std::nullopt;
    return *std::move(outputs);
  }

  // Output bytes the shape rules predict from the constant inputs; 0 when unknown.
  static int64_t PredictedOutputBytes(const Node& node, int opset, const std::vector<Tensor>& inputs) {
    std::vector<ValueFacts> facts;
    facts.reserve(inputs.size());
    for (const Tensor& t : inputs) facts.push_back(t.empty() ? ValueFacts() : FactsOfConstant(t));
    std::vector<const ValueFacts*> ptrs;
    for (size_t i = 0; i < inputs.size(); ++i) ptrs.push_back(inputs[i].empty() ? nullptr : &facts[i]);
    auto outs = InferNodeFacts(node, opset, ptrs);
    if (!outs) return 0;
    int64_t total = 0;
    for (const ValueFacts& f : *outs) {
      if (!f.shape || !IsStatic(*f.shape)) continue;
      int64_t n = static_cast<int64_t>(ElementSize(f.type));
      for (const Dim& d : *f.shape)
        if (__builtin_mul_overflow(n, d.value(), &n)) return INT64_MAX;
      total += n;
    }
    return total;
  }

  ConstantFoldingOptions options_;
};

}  // namespace

std::unique_ptr<Pass> MakeConstantFoldingPass(const ConstantFoldingOptions& options) {
  return std::make_unique<ConstantFoldingPass>(options);
}

std::unique_ptr<Pass> MakeConstantFoldingPass() { return MakeConstantFoldingPass(ConstantFoldingOptions{}); }

}  // namespace attune
