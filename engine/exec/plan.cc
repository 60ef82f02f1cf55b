#include "engine/exec/plan.h"

#include <omp.h>

#include <chrono>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"
#include "engine/exec/cache_sites.h"
#include "engine/exec/plan_evaluator.h"
#include "ops/common/omp_team_scope.h"

namespace attune {
namespace {

std::string NodeLabel(const std::string& name, const std::string& op_type) {
  return absl::StrCat("node ", QuoteName(name), " (", EscapeControl(op_type), ")");
}

// Per slot, the caller's buffer for the graph output it holds, or nullptr. Only
// slots a step computes qualify (inputs and constants are already filled), the
// first buffer wins when outputs repeat a value, and a buffer must be aligned
// for its element type. A graph output that is an Identity of a value a kernel
// computes (exporters name outputs that way, and fused ops write their results
// under a new name) passes its buffer on to that value, so that the kernel
// writes it there and the Identity's alias is the buffer. Empty when no buffer
// qualifies.
std::vector<const Tensor*> AssignOutputBuffers(const std::vector<Tensor>* buffers, const std::vector<int>& output_slots,
                                               const std::vector<Tensor>& slots,
                                               const absl::flat_hash_map<int, int>& identity_source) {
  std::vector<const Tensor*> by_slot;
  if (buffers == nullptr) return by_slot;
  for (size_t i = 0; i < output_slots.size(); ++i) {
    const Tensor& buffer = (*buffers)[i];
    const int sl = output_slots[i];
    if (buffer.empty() || !slots[sl].empty()) continue;
    const size_t element_size = ElementSize(buffer.type());
    if (element_size == 0 || reinterpret_cast<uintptr_t>(buffer.raw_data()) % element_size != 0) continue;
    if (by_slot.empty()) by_slot.resize(slots.size(), nullptr);
    if (by_slot[sl] != nullptr) continue;
    by_slot[sl] = &buffer;
    for (auto it = identity_source.find(sl); it != identity_source.end(); it = identity_source.find(it->second)) {
      const int source = it->second;
      if (by_slot[source] != nullptr || !slots[source].empty()) break;
      by_slot[source] = &buffer;
    }
  }
  return by_slot;
}

}  // namespace

// Fills `buffers` with the caller's buffers for this step's outputs; false when
// the step computes no graph output that has one.
bool Plan::CollectStepBuffers(const Step& step, const std::vector<const Tensor*>& slot_buffers,
                              std::vector<Tensor>& buffers) {
  bool any = false;
  buffers.assign(step.output_slots.size(), Tensor());
  for (size_t o = 0; o < step.output_slots.size(); ++o) {
    const int sl = step.output_slots[o];
    if (sl < 0 || slot_buffers[sl] == nullptr) continue;
    buffers[o] = *slot_buffers[sl];
    any = true;
  }
  return any;
}

bool Plan::SharesConstantMemory(const Tensor& t) const {
  const char* p = static_cast<const char*>(t.raw_data());
  if (p == nullptr) return false;
  for (const auto& [sl, c] : constants_) {
    const char* begin = static_cast<const char*>(c.raw_data());
    if (begin != nullptr && p >= begin && p < begin + c.byte_size()) return true;
  }
  return false;
}

absl::StatusOr<std::unique_ptr<Plan>> Plan::Compile(const Graph& graph, const KernelRegistry& registry,
                                                    const ExecOptions& options, const HeldConstantCallback& on_held) {
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
  absl::flat_hash_map<const Node*, int> step_of;
  for (size_t s = 0; s < order.size(); ++s) step_of[order[s]] = static_cast<int>(s);
  auto port_of = [&](const CacheSite& site) {
    if (site.node == nullptr) return CachePort{-1, -1, site.why_not};
    auto it = step_of.find(site.node);
    return it != step_of.end() ? CachePort{it->second, site.port, ""}
                               : CachePort{-1, -1, "its attention node is not in the plan"};
  };
  for (Value* in : graph.inputs()) {
    if (in->is_constant()) continue;  // an input with an initializer default is served by the constant
    plan->input_slots_.push_back(slot(in));
    plan->inputs_.push_back({in->name(), in->type(), in->shape()});
    plan->past_ports_.push_back(port_of(FindPastSite(*in)));
  }
  absl::flat_hash_map<int, int> last_reader;  // slot -> step index
  const PlanEvaluator subgraph_evaluator(registry);  // compiles If's, Loop's and Scan's subgraphs
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
    if (node->has_subgraphs()) {
      info.subgraphs = &node->subgraphs();
      info.subgraph_evaluator = &subgraph_evaluator;
    }
    for (const Value* in : node->inputs()) {
      info.input_present.push_back(in != nullptr);
      info.constant_inputs.push_back(in != nullptr ? in->constant() : nullptr);
      info.sole_reader.push_back(in != nullptr && in->is_constant() && !in->is_graph_input() &&
                                 !in->is_graph_output() && in->uses().size() == 1);
      info.released_constants.push_back(in != nullptr ? in->constant_holder() : nullptr);
      info.input_types.push_back(in != nullptr && in->type() != ElementType::kUndefined
                                     ? std::optional<ElementType>(in->type())
                                     : std::nullopt);
      step.input_slots.push_back(in != nullptr ? slot(in) : -1);
      if (in != nullptr && (!in->is_constant() || in->is_graph_input()))
        last_reader[step.input_slots.back()] = static_cast<int>(s);
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
    // A released constant the kernel does not take in its held form is
    // restored for it (a plan compiled after the release, such as the
    // unspecialised one, on a node that reads the weights differently).
    std::vector<Tensor> restored(node->num_inputs());
    bool restore = false;
    for (int i = 0; i < node->num_inputs(); ++i)
      restore |= info.released_constants[i] != nullptr && (*kernel)->HeldInput(i) == nullptr;
    if (restore) {
      for (int i = 0; i < node->num_inputs(); ++i) {
        if (info.released_constants[i] == nullptr) continue;
        auto data = info.released_constants[i]->Restore();
        if (!data.ok()) return Annotate(data.status(), NodeLabel(node->name(), node->op_type()));
        restored[i] = *std::move(data);
        info.constant_inputs[i] = &restored[i];
        info.released_constants[i] = nullptr;
      }
      kernel = (*entry)->factory(info);
      if (!kernel.ok()) return Annotate(kernel.status(), NodeLabel(node->name(), node->op_type()));
    }
    step.kernel = *std::move(kernel);
    // Constants go into the plan's slots unless the kernel holds them.
    for (int i = 0; i < node->num_inputs(); ++i) {
      const Value* in = node->input(i);
      if (in == nullptr || !in->is_constant() || in->is_graph_input()) continue;
      const int sl = step.input_slots[i];
      if (std::shared_ptr<const ConstantHolder> held = step.kernel->HeldInput(i)) {
        if (info.sole_reader[i] && in->constant() != nullptr && on_held) on_held(*in, std::move(held));
        continue;
      }
      bool seen = false;
      for (const auto& [cs, t] : plan->constants_) seen |= cs == sl;
      if (!seen) plan->constants_.emplace_back(sl, in->constant() != nullptr ? *in->constant() : restored[i]);
    }
    plan->steps_.push_back(std::move(step));
  }
  for (const Value* out : graph.outputs()) {
    const int sl = slot(out);
    plan->output_slots_.push_back(sl);
    plan->outputs_.push_back({out->name(), out->type(), out->shape()});
    plan->present_ports_.push_back(port_of(FindPresentSite(*out)));
    last_reader.erase(sl);  // graph outputs live to the end
    if (out->is_constant() && !out->is_graph_input()) {
      if (out->constant() == nullptr)
        return absl::FailedPreconditionError(absl::StrCat("graph output ", QuoteName(out->name()),
                                                          " is a constant whose data was released"));
      bool seen = false;
      for (const auto& [cs, t] : plan->constants_) seen |= cs == sl;
      if (!seen) plan->constants_.emplace_back(sl, *out->constant());
    }
  }
  for (const auto& [sl, step] : last_reader) plan->steps_[step].release_after.push_back(sl);
  // Graph outputs that are Identity(v) of a value v some step computes and no
  // graph output is itself: v may be computed in the output's buffer.
  for (const Value* out : graph.outputs()) {
    const Node* identity = out->producer();
    if (identity == nullptr || identity->op_type() != "Identity" || identity->domain() != "") continue;
    const Value* source = identity->input(0);
    if (source == nullptr || source->producer() == nullptr || source->is_graph_output() || source->is_constant() ||
        source->is_graph_input())
      continue;
    plan->identity_source_.emplace(slot_of.at(out), slot_of.at(source));
  }
  return plan;
}

absl::Status Plan::CheckCacheBinding(int input, int output) const {
  if (input < 0 || input >= static_cast<int>(inputs_.size()) || output < 0 ||
      output >= static_cast<int>(outputs_.size()))
    return absl::InvalidArgumentError(absl::StrCat("cache binding of input ", input, " and output ", output,
                                                   " is outside the plan's inputs and outputs"));
  const CachePort& past = past_ports_[input];
  const CachePort& present = present_ports_[output];
  const std::string past_name = QuoteName(inputs_[input].name);
  const std::string present_name = QuoteName(outputs_[output].name);
  if (past.step < 0)
    return absl::FailedPreconditionError(absl::StrCat("past ", past_name, " cannot be read in place: ", past.why_not));
  if (present.step < 0)
    return absl::FailedPreconditionError(
        absl::StrCat("present ", present_name, " cannot be appended in place: ", present.why_not));
  const int expected_port = past.port == mha::kInputPastKey ? mha::kOutputPresentKey : mha::kOutputPresentValue;
  if (present.step != past.step || present.port != expected_port)
    return absl::FailedPreconditionError(absl::StrCat(
        "past ", past_name, " and present ", present_name, " are not the same cache tensor of one attention node (",
        NodeLabel(steps_[past.step].node_name, steps_[past.step].op_type), " reads the past, ",
        NodeLabel(steps_[present.step].node_name, steps_[present.step].op_type), " writes the present)"));
  return absl::OkStatus();
}

absl::Status Plan::CheckInputs(const std::vector<Tensor>& inputs) const {
  if (inputs.size() != inputs_.size())
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", inputs_.size(), " inputs, got ", inputs.size()));
  absl::flat_hash_map<std::string, int64_t> symbols;
  std::vector<std::pair<size_t, size_t>> expressions;  // {input, dim} of symbols that are expressions
  auto bind = [&](size_t i, size_t d) -> absl::Status {
    const std::string& symbol = (*inputs_[i].shape)[d].symbol();
    const int64_t actual = inputs[i].shape()[d];
    auto [it, inserted] = symbols.try_emplace(symbol, actual);
    if (!inserted && it->second != actual)
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(inputs_[i].name), " dimension ", d, " ('",
                                                     symbol, "') is ", actual, " but another input binds it to ",
                                                     it->second));
    return absl::OkStatus();
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    const ValueInfo& info = inputs_[i];
    const Tensor& t = inputs[i];
    if (t.empty()) return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(info.name), " is missing"));
    if (info.type != ElementType::kUndefined && t.type() != info.type)
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(info.name), " has element type ",
                                                     ElementTypeName(t.type()), ", expected ",
                                                     ElementTypeName(info.type)));
    if (!info.shape.has_value()) continue;
    const SymbolicShape& shape = *info.shape;
    if (static_cast<size_t>(t.rank()) != shape.size())
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(info.name), " has rank ", t.rank(), " (shape ",
                                                     ShapeToString(t.shape()), "), expected rank ", shape.size(), " ",
                                                     SymbolicShapeToString(shape)));
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t actual = t.shape()[d];
      if (shape[d].is_known() && shape[d].value() != actual)
        return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(info.name), " has shape ",
                                                       ShapeToString(t.shape()), ", expected ",
                                                       SymbolicShapeToString(shape)));
      if (!shape[d].is_symbol()) continue;
      const DimAtom* atom = shape[d].expr()->single_atom();
      if (atom == nullptr || atom->is_min()) {
        expressions.push_back({i, d});  // "past_seq+seq": checked once the names are bound
        continue;
      }
      RETURN_IF_ERROR(bind(i, d));
    }
  }
  for (const auto& [i, d] : expressions) {
    const Dim& dim = (*inputs_[i].shape)[d];
    const int64_t actual = inputs[i].shape()[d];
    const std::optional<int64_t> value = dim.expr()->Evaluate([&](const std::string& text) -> std::optional<int64_t> {
      auto it = symbols.find(text);
      return it == symbols.end() ? std::nullopt : std::optional<int64_t>(it->second);
    });
    if (!value) {
      RETURN_IF_ERROR(bind(i, d));  // names no other input binds: the text is the symbol
      continue;
    }
    if (*value != actual)
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(inputs_[i].name), " dimension ", d, " ('",
                                                     dim.symbol(), "') is ", actual, " but the other inputs make it ",
                                                     *value));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Tensor>> Plan::Run(std::vector<Tensor> inputs, const NodeObserver* observer,
                                               const std::vector<Tensor>* output_buffers,
                                               const std::vector<PlanCacheBinding>* caches) const {
  RETURN_IF_ERROR(CheckInputs(inputs));
  // Per step, per input, the cache buffer it appends to (empty when no binding).
  std::vector<std::vector<const CacheAppend*>> step_appends;
  if (caches != nullptr && !caches->empty()) {
    step_appends.resize(steps_.size());
    for (const PlanCacheBinding& c : *caches) {
      RETURN_IF_ERROR(CheckCacheBinding(c.input, c.output));
      const CachePort& port = past_ports_[c.input];
      std::vector<const CacheAppend*>& appends = step_appends[port.step];
      appends.resize(steps_[port.step].input_slots.size(), nullptr);
      if (appends[port.port] != nullptr)
        return absl::InvalidArgumentError(
            absl::StrCat("past ", QuoteName(inputs_[c.input].name), " is bound to two cache buffers"));
      appends[port.port] = &c.append;
    }
  }
  if (output_buffers != nullptr && output_buffers->size() != output_slots_.size())
    return absl::InvalidArgumentError(absl::StrCat("expected ", output_slots_.size(), " output buffers, got ",
                                                   output_buffers->size()));
  OmpTeamScope team(options_.threads);
  std::vector<Tensor> slots(num_slots_);
  for (const auto& [sl, t] : constants_) slots[sl] = t;
  for (size_t i = 0; i < inputs.size(); ++i) slots[input_slots_[i]] = std::move(inputs[i]);
  const std::vector<const Tensor*> slot_buffers =
      AssignOutputBuffers(output_buffers, output_slots_, slots, identity_source_);
  std::vector<Tensor> step_buffers;

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
    const size_t step_index = static_cast<size_t>(&step - steps_.data());
    if (!step_appends.empty() && !step_appends[step_index].empty()) ctx.set_cache_appends(&step_appends[step_index]);
    if (!slot_buffers.empty() && CollectStepBuffers(step, slot_buffers, step_buffers))
      ctx.set_preassigned_outputs(&step_buffers);
    const auto start = std::chrono::steady_clock::now();
    absl::Status status = step.kernel->Run(ctx);
    if (!status.ok()) return Annotate(status, NodeLabel(step.node_name, step.op_type));
    if (observer != nullptr) {
      const auto end = std::chrono::steady_clock::now();
      (*observer)(NodeTiming{&step.node_name, &step.op_type,
                             std::chrono::duration<double, std::micro>(start - run_start).count(),
                             std::chrono::duration<double, std::micro>(end - start).count(), step_inputs,
                             outputs});
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
    // An output that is (a view of) a model constant is copied, so that a
    // caller writing into its result cannot change what other runs compute.
    const Tensor& out = slots[output_slots_[i]];
    results.push_back(SharesConstantMemory(out) ? out.Clone() : out);
  }
  return results;
}

}  // namespace attune
