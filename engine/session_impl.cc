#include "engine/session_impl.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/log.h"
#include "core/common/status_macros.h"
#include "core/memory/buffer_pool.h"
#include "engine/optimise_graph.h"
#include "ops/attention/attention_backend.h"
#include "ops/common/team_monitor.h"
#include "ops/registry.h"

namespace attune {
namespace {

AttentionBackend ToBackend(AttentionBackendOption option) {
  switch (option) {
    case AttentionBackendOption::kSimd: return AttentionBackend::kSimd;
    case AttentionBackendOption::kOneDnn: return AttentionBackend::kOneDnn;
    case AttentionBackendOption::kReference: return AttentionBackend::kReference;
    default: return AttentionBackend::kAuto;
  }
}

LogLevel ToLogLevel(LogSeverity severity) {
  switch (severity) {
    case LogSeverity::kDebug: return LogLevel::kDebug;
    case LogSeverity::kInfo: return LogLevel::kInfo;
    case LogSeverity::kWarning: return LogLevel::kWarning;
    case LogSeverity::kError: return LogLevel::kError;
    case LogSeverity::kOff: return LogLevel::kOff;
  }
  return LogLevel::kWarning;
}

ModelSummary Summarize(const Graph& graph) {
  ModelSummary summary;
  summary.producer = graph.producer_version.empty() ? graph.producer_name
                                                    : absl::StrCat(graph.producer_name, " ", graph.producer_version);
  summary.ir_version = graph.ir_version;
  summary.opsets = graph.opsets();
  summary.num_nodes = graph.num_nodes();
  absl::flat_hash_set<const Value*> seen;
  for (const Node* node : graph.nodes()) {
    for (const Value* in : node->inputs()) {
      if (in == nullptr || !in->is_constant() || !seen.insert(in).second) continue;
      ++summary.num_initializers;
      // A constant left in the model file is released from the start: its value keeps type and shape.
      int64_t count = 1;
      if (in->constant() != nullptr) count = in->constant()->num_elements();
      else if (in->shape().has_value() && IsStatic(*in->shape()))
        for (int64_t d : StaticDims(*in->shape())) count *= d;
      summary.num_parameters += count;
      summary.parameter_bytes += count * static_cast<int64_t>(ElementSize(in->type()));
    }
  }
  return summary;
}

// Releases a constant that a kernel holds packed from the graph, and from the
// unspecialised graph that shares its buffer, so that the weights are held
// once: by the packed copy. A plan compiled later from either graph takes the
// packed copy, or restores the data where a node needs it plain.
HeldConstantCallback ReleaseFrom(Graph& graph, Graph* unspecialised) {
  return [&graph, unspecialised](const Value& constant, std::shared_ptr<const ConstantHolder> holder) {
    Value* v = graph.FindValue(constant.name());
    if (v == nullptr || v->constant() == nullptr) return;
    const void* data = v->constant()->raw_data();
    Value* u = unspecialised != nullptr ? unspecialised->FindValue(constant.name()) : nullptr;
    if (u != nullptr && u->constant() != nullptr && u->constant()->raw_data() == data && !u->is_graph_output())
      unspecialised->ReleaseConstant(u, holder);
    graph.ReleaseConstant(v, std::move(holder));
    // The buffer went to the buffer pool, which keeps buffers for the
    // intermediates of runs; weights are not of those sizes.
    TrimBufferPool();
  };
}

}  // namespace

TensorInfo ToTensorInfo(const ValueInfo& v) {
  TensorInfo info;
  info.name = v.name;
  info.type = v.type;
  info.has_shape = v.shape.has_value();
  if (v.shape) {
    for (const Dim& d : *v.shape) {
      info.shape.push_back(d.is_known() ? d.value() : -1);
      info.shape_symbols.push_back(d.is_symbol() ? d.symbol() : "");
    }
  }
  return info;
}

TensorInfo ToTensorInfo(const Value& v) { return ToTensorInfo(ValueInfo{v.name(), v.type(), v.shape()}); }

ExecOptions ToExecOptions(const SessionOptions& options) {
  ExecOptions exec;
  exec.threads = options.threads;
  exec.max_tensor_bytes = options.max_tensor_bytes;
  exec.max_loop_iterations = options.max_loop_iterations;
  exec.attention_backend = ToBackend(options.attention_backend);
  exec.logger = Logger(ToLogLevel(options.log_severity));
  return exec;
}

absl::StatusOr<std::unique_ptr<SessionImpl>> SessionImpl::Create(std::unique_ptr<Graph> graph,
                                                                 const SessionOptions& options) {
  if (options.threads < 0) return absl::InvalidArgumentError("threads must be >= 0");
  if (options.max_tensor_bytes <= 0) return absl::InvalidArgumentError("max_tensor_bytes must be positive");
  if (options.max_loop_iterations <= 0) return absl::InvalidArgumentError("max_loop_iterations must be positive");
  auto impl = std::unique_ptr<SessionImpl>(new SessionImpl());
  impl->options_ = options;
  impl->summary_ = Summarize(*graph);

  ASSIGN_OR_RETURN(OptimisedGraph optimised, OptimiseGraph(std::move(graph), options));
  impl->report_ = std::move(optimised.report);
  impl->assumptions_ = std::move(optimised.assumptions);
  impl->unspecialised_graph_ = std::move(optimised.unspecialised);
  impl->graph_ = std::move(optimised.graph);
  // What the model declares: the unspecialised graph's inputs when there is one.
  const Graph& declared = impl->unspecialised_graph_ != nullptr ? *impl->unspecialised_graph_ : *impl->graph_;
  for (Value* v : declared.inputs()) impl->declared_inputs_.push_back(ValueInfo{v->name(), v->type(), v->shape()});
  for (const ValueInfo& v : impl->declared_inputs_) impl->inputs_.push_back(ToTensorInfo(v));
  for (const Value* v : declared.outputs()) impl->outputs_.push_back(ToTensorInfo(*v));
  ASSIGN_OR_RETURN(impl->plan_, Plan::Compile(*impl->graph_, DefaultKernelRegistry(), ToExecOptions(options),
                                               ReleaseFrom(*impl->graph_, impl->unspecialised_graph_.get())));
  if (options.threads != 1) ProbeCoresOnce(options.threads);
  return impl;
}

absl::StatusOr<const Plan*> SessionImpl::PlanFor(const std::vector<Tensor>& inputs) const {
  if (DimAssumptionsHold(assumptions_, declared_inputs_, inputs)) return plan_.get();
  std::lock_guard<std::mutex> lock(unspecialised_mutex_);
  if (unspecialised_plan_ == nullptr) {
    ASSIGN_OR_RETURN(unspecialised_plan_,
                     Plan::Compile(*unspecialised_graph_, DefaultKernelRegistry(), ToExecOptions(options_)));
  }
  return unspecialised_plan_.get();
}

absl::StatusOr<NamedTensors> SessionImpl::Run(const NamedTensors& inputs, const NodeObserver* observer,
                                              const std::vector<Tensor>* output_buffers,
                                              const std::vector<PlanCacheBinding>* caches) const {
  absl::flat_hash_map<std::string, const Tensor*> by_name;
  for (const auto& [name, tensor] : inputs) {
    if (!by_name.emplace(name, &tensor).second)
      return absl::InvalidArgumentError(absl::StrCat("input ", QuoteName(name), " is given twice"));
  }
  std::vector<Tensor> ordered;
  ordered.reserve(inputs_.size());
  for (const TensorInfo& info : inputs_) {
    auto it = by_name.find(info.name);
    if (it == by_name.end()) return absl::InvalidArgumentError(absl::StrCat("missing input ", QuoteName(info.name)));
    ordered.push_back(*it->second);
    by_name.erase(it);
  }
  if (!by_name.empty()) {
    std::vector<std::string> names;
    for (const TensorInfo& info : inputs_) names.push_back(EscapeControl(info.name));
    return absl::InvalidArgumentError(absl::StrCat("unknown input ", QuoteName(by_name.begin()->first),
                                                   " (the model's inputs: ", absl::StrJoin(names, ", "), ")"));
  }
  ASSIGN_OR_RETURN(const Plan* plan, PlanFor(ordered));
  if (plan != plan_.get() && caches != nullptr && !caches->empty())
    return absl::FailedPreconditionError(absl::StrCat(
        "cache buffers are bound to the plan that assumes ", assumptions_.front().ToString(),
        ", and these inputs break it"));
  ASSIGN_OR_RETURN(std::vector<Tensor> results, plan->Run(std::move(ordered), observer, output_buffers, caches));
  NamedTensors named;
  for (size_t i = 0; i < results.size(); ++i) named.emplace_back(outputs_[i].name, std::move(results[i]));
  return named;
}

}  // namespace attune
