// The implementation behind attune::Session: import, optimise, compile, run.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "core/ir/graph.h"
#include "engine/dim_assumptions.h"
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
  /// The optimised graph the plan was compiled from (under `assumptions()`).
  const Graph& graph() const { return *graph_; }
  const Plan& plan() const { return *plan_; }
  /// Input relations the plan was optimised under (dim_assumptions.h); a run
  /// that breaks one runs a plan of the graph optimised without them.
  const std::vector<DimAssumption>& assumptions() const { return assumptions_; }

  /// Runs the plan on named inputs (never copied). `output_buffers`, when given,
  /// holds per graph output a caller buffer to compute it in (see Plan::Run).
  /// `caches` binds pasts and presents to appended buffers (Plan::Run); the
  /// bound pasts must be among `inputs` (read for their shape only).
  absl::StatusOr<NamedTensors> Run(const NamedTensors& inputs, const NodeObserver* observer = nullptr,
                                   const std::vector<Tensor>* output_buffers = nullptr,
                                   const std::vector<PlanCacheBinding>* caches = nullptr) const;

 private:
  /// `plan_`, or the unspecialised plan (compiled at its first use) when
  /// `inputs` break an assumption.
  absl::StatusOr<const Plan*> PlanFor(const std::vector<Tensor>& inputs) const;

  SessionOptions options_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<Plan> plan_;
  FusionReport report_;
  ModelSummary summary_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
  std::vector<ValueInfo> declared_inputs_;  // as the unspecialised graph has them
  std::vector<DimAssumption> assumptions_;
  std::unique_ptr<Graph> unspecialised_graph_;  // optimised without the assumptions; null without them
  mutable std::mutex unspecialised_mutex_;
  mutable std::unique_ptr<Plan> unspecialised_plan_;
};

/// The public description of a graph input or output.
TensorInfo ToTensorInfo(const ValueInfo& v);
TensorInfo ToTensorInfo(const Value& v);

/// Maps the public option to the kernel-level one.
ExecOptions ToExecOptions(const SessionOptions& options);

}  // namespace attune
