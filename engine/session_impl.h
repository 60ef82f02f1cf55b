// The implementation behind attune::Session: import, optimise, compile, run.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "core/ir/graph.h"
#include "engine/exec/plan.h"

namespace attune {

/// Facts about the model as imported, before any pass ran.
struct ModelSummary {
  std::string producer;          // "pytorch 1.13.0"
  int64_t ir_version = 0;
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> version
  int64_t num_nodes = 0;
  int64_t num_initializers = 0;
  int64_t num_parameters = 0;    // elements of all initializers
  int64_t parameter_bytes = 0;
};

/// Everything a Session holds; its const methods are safe from many threads.
class SessionImpl {
 public:
  /// Optimises `graph` (per options) and compiles it.
  static absl::StatusOr<std::unique_ptr<SessionImpl>> Create(std::unique_ptr<Graph> graph,
                                                             const SessionOptions& options);

  const std::vector<TensorInfo>& inputs() const { return inputs_; }
  const std::vector<TensorInfo>& outputs() const { return outputs_; }
  const FusionReport& report() const { return report_; }
  const ModelSummary& model_summary() const { return summary_; }
  const SessionOptions& options() const { return options_; }
  /// The optimised graph the plan was compiled from.
  const Graph& graph() const { return *graph_; }
  const Plan& plan() const { return *plan_; }

  /// Runs the plan on named inputs (never copied). `output_buffers`, when given,
  /// holds per graph output a caller buffer to compute it in (see Plan::Run).
  /// `caches` binds pasts and presents to appended buffers (Plan::Run); the
  /// bound pasts must be among `inputs` (read for their shape only).
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs, const NodeObserver* observer = nullptr,
                                   const std::vector<Tensor>* output_buffers = nullptr,
                                   const std::vector<PlanCacheBinding>* caches = nullptr) const;

 private:
  SessionOptions options_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Plan> plan_;
  FusionReport report_;
  ModelSummary summary_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
};

/// Maps the public option to the kernel-level one.
ExecOptions ToExecOptions(const SessionOptions& options);

}  // namespace attune
