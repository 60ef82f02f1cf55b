#include "engine/session_impl.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/log.h"
#include "core/common/status_macros.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "ops/attention/attention_backend.h"
#include "ops/registry.h"

namespace attune {
namespace {

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
      summary.num_parameters += in->constant()->num_elements();
      summary.parameter_bytes += static_cast<int64_t>(in->constant()->byte_size());
    }
  }
  return summary;
}

}  // namespace

ExecOptions ToExecOptions(const SessionOptions& options) {
  ExecOptions exec;
  exec.threads = options.threads;
  exec.max_tensor_bytes = options.max_tensor_bytes;
  exec.attention_backend = ToBackend(options.attention_backend);
  exec.logger = Logger(ToLogLevel(options.log_severity));
  return exec;
}

absl::StatusOr<std::unique_ptr<SessionImpl>> SessionImpl::Create(std::unique_ptr<Graph> graph,
                                                                 const SessionOptions& options) {
  if (options.threads < 0) return absl::InvalidArgumentError("threads must be >= 0");
  if (options.max_tensor_bytes <= 0) return absl::InvalidArgumentError("max_tensor_bytes must be positive");
  auto impl = std::unique_ptr<SessionImpl>(new SessionImpl());
  impl->options_ = options;
  impl->graph_ = std::move(graph);
  const ExecOptions exec = ToExecOptions(options);

  impl->summary_ = Summarize(*impl->graph_);
  impl->report_.ops_before = OpHistogram(*impl->graph_);
  std::unique_ptr<PassManager> pipeline = DefaultPipeline(options.fuse);
  for (const std::string& name : options.disabled_passes) RETURN_IF_ERROR(pipeline->Disable(name));
  if (!options.stop_after_pass.empty()) RETURN_IF_ERROR(pipeline->StopAfter(options.stop_after_pass));
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  const PlanEvaluator evaluator(DefaultKernelRegistry());
  context.evaluator = &evaluator;
  context.exec_options = exec;
  context.report = &impl->report_;
  context.verify_fusion = options.verify_fusion;
  RETURN_IF_ERROR(pipeline->Run(*impl->graph_, context));
  impl->report_.ops_after = OpHistogram(*impl->graph_);

  ASSIGN_OR_RETURN(impl->plan_, Plan::Compile(*impl->graph_, DefaultKernelRegistry(), exec));
  for (const ValueInfo& v : impl->plan_->inputs()) impl->inputs_.push_back(ToTensorInfo(v));
  for (const ValueInfo& v : impl->plan_->outputs()) impl->outputs_.push_back(ToTensorInfo(v));
  return impl;
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
  ASSIGN_OR_RETURN(std::vector<Tensor> results, plan_->Run(std::move(ordered), observer, output_buffers, caches));
  NamedTensors named;
  for (size_t i = 0; i < results.size(); ++i) named.emplace_back(outputs_[i].name, std::move(results[i]));
  return named;
}

}  // namespace attune
