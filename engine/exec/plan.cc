#include "engine/exec/plan.h"

#include <omp.h>

#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "engine/common/status_macros.h"

namespace attune {
namespace {

std::string NodeLabel(const std::string& name, const std::string& op_type) {
  return absl::StrCat("node '", name, "' (", op_type, ")");
}

}  // namespace

absl::StatusOr<std::unique_ptr<Plan>> Plan::Compile(const Graph& graph, const KernelRegistry& registry,
                                                    const ExecOptions& options) {
  RETURN_IF_ERROR(graph.Verify());
  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  auto plan = std::unique_ptr<Plan>(new Plan());
  plan->options_ = options;

  absl::flat_hash_map<const Value*, int> slot_of;
  auto slot = [&](const Value* v) {
    auto [it, inserted] = slot_of.try_emplace(v, plan->num_slots_);
    if (inserted) ++plan->num_slots_;
    return it->second;
  };
  for (Value* in : graph.inputs()) {
    if (in->is_constant()) continue;  // an input with an initializer default is served by the constant
    plan->input_slots_.push_back(slot(in));
    plan->inputs_.push_back({in->name(), in->type(), in->shape()});
  }
  absl::flat_hash_map<int, int> last_reader;  // slot -> step index
  for (size_t s = 0; s < order.size(); ++s) {
    const Node* node = order[s];
    Step step;
    step.node_name = node->name();
    step.op_type = node->op_type();
    KernelInfo info;
    info.node_name = node->name();
    info.op_type = node->op_type();
    info.domain = node->domain();
    info.opset = graph.OpsetFor(node->domain());
    info.attributes = &node->attributes();
    info.num_outputs = node->num_outputs();
    info.options = &plan->options_;
    for (const Value* in : node->inputs()) {
      info.input_present.push_back(in != nullptr);
      info.constant_inputs.push_back(in != nullptr ? in->constant() : nullptr);
      info.input_types.push_back(in != nullptr && in->type() != ElementType::kUndefined
                                     ? std::optional<ElementType>(in->type())
                                     : std::nullopt);
      if (in == nullptr) {
        step.input_slots.push_back(-1);
        continue;
      }
      const int sl = slot(in);
      step.input_slots.push_back(sl);
      if (in->is_constant() && !in->is_graph_input()) {
        bool seen = false;
        for (const auto& [cs, t] : plan->constants_) seen |= cs == sl;
        if (!seen) plan->constants_.emplace_back(sl, *in->constant());
      } else {
        last_reader[sl] = static_cast<int>(s);
      }
    }
    for (const Value* out : node->outputs()) {
      step.output_slots.push_back(out != nullptr ? slot(out) : -1);
      step.outputs_wanted.push_back(out != nullptr && (!out->uses().empty() || out->is_graph_output()));
    }
    if (node->domain() != "" && info.opset == 0) info.opset = 1;
    auto entry = registry.Find(node->domain(), node->op_type(), info.opset);
    if (!entry.ok()) return Annotate(entry.status(), NodeLabel(node->name(), node->op_type()));
    auto kernel = (*entry)->factory(info);
    if (!kernel.ok()) return Annotate(kernel.status(), NodeLabel(node->name(), node->op_type()));
    step.kernel = *std::move(kernel);
    plan->steps_.push_back(std::move(step));
  }
  for (const Value* out : graph.outputs()) {
    const int sl = slot(out);
    plan->output_slots_.push_back(sl);
    plan->outputs_.push_back({out->name(), out->type(), out->shape()});
    last_reader.erase(sl);  // graph outputs live to the end
    if (out->is_constant() && !out->is_graph_input()) {
      bool seen = false;
      for (const auto& [cs, t] : plan->constants_) seen |= cs == sl;
      if (!seen) plan->constants_.emplace_back(sl, *out->constant());
    }
  }
  for (const auto& [sl, step] : last_reader) plan->steps_[step].release_after.push_back(sl);
  return plan;
}

absl::Status Plan::CheckInputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != inputs_.size())
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", inputs_.size(), " inputs, got ", inputs.size()));
  absl::flat_hash_map<std::string, int64_t> symbols;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& info = inputs_[i];
    const Tensor& t = inputs[i];
    if (t.empty()) return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' is missing"));
    if (info.type != ElementType::kUndefined && t.type() != info.type)
      return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has element type ",
                                                     ElementTypeName(t.type()), ", expected ",
                                                     ElementTypeName(info.type)));
    if (!info.shape.has_value()) continue;
    const SymbolicShape& shape = *info.shape;
    if (static_cast<size_t>(t.rank()) != shape.size())
      return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has rank ", t.rank(), " (shape ",
                                                     ShapeToString(t.shape()), "), expected rank ", shape.size(),
                                                     " ", SymbolicShapeToString(shape)));
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t actual = t.shape()[d];
      if (shape[d].is_known() && shape[d].value() != actual)
        return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' has shape ", ShapeToString(t.shape()),
                                                       ", expected ", SymbolicShapeToString(shape)));
      if (shape[d].is_symbol()) {
        auto [it, inserted] = symbols.try_emplace(shape[d].symbol(), actual);
        if (!inserted && it->second != actual)
          return absl::InvalidArgumentError(absl::StrCat("input '", info.name, "' dimension ", d, " ('",
                                                         shape[d].symbol(), "') is ", actual,
                                                         " but another input binds it to ", it->second));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Plan::Run(std::vector<Tensor> inputs, const NodeObserver* observer) const {
  RETURN_IF_ERROR(CheckInputs(inputs));
  if (options_.threads > 0) omp_set_num_threads(options_.threads);
  std::vector<Tensor> slots(num_slots_);
  for (const auto& [sl, t] : constants_) slots[sl] = t;
  for (size_t i = 0; i < inputs.size(); ++i) slots[input_slots_[i]] = std::move(inputs[i]);

  const auto run_start = std::chrono::steady_clock::now();
  std::vector<const Tensor*> step_inputs;
  for (const Step& step : steps_) {
    step_inputs.clear();
    for (int sl : step.input_slots) {
      const Tensor* t = sl >= 0 ? &slots[sl] : nullptr;
      step_inputs.push_back(t != nullptr && !t->empty() ? t : nullptr);
    }
    std::vector<Tensor> outputs(step.output_slots.size());
    KernelContext ctx(step_inputs, &outputs, step.outputs_wanted, &options_);
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = step.kernel->Run(ctx);
    if (!status.ok()) return Annotate(status, NodeLabel(step.node_name, step.op_type));
    if (observer != nullptr) {
      const auto end = std::chrono::steady_clock::now();
      (*observer)(NodeTiming{&step.node_name, &step.op_type,
                             std::chrono::duration<double, std::micro>(start - run_start).count(),
                             std::chrono::duration<double, std::micro>(end - start).count()});
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      const int sl = step.output_slots[o];
      if (sl < 0) continue;
      if (outputs[o].empty() && step.outputs_wanted[o])
        return absl::InternalError(
            absl::StrCat(NodeLabel(step.node_name, step.op_type), ": kernel did not produce output ", o));
      slots[sl] = std::move(outputs[o]);
    }
    for (int sl : step.release_after) slots[sl] = Tensor();
  }
  std::vector<Tensor> results;
  results.reserve(output_slots_.size());
  for (size_t i = 0; i < output_slots_.size(); ++i) {
    if (slots[output_slots_[i]].empty())
      return absl::InternalError(absl::StrCat("graph output '", outputs_[i].name, "' was not computed"));
    results.push_back(slots[output_slots_[i]]);
  }
  return results;
}

}  // namespace attune
