// A compiled graph: one prepared kernel per node in topological order, a slot
// per value, and the point after which each intermediate can be freed.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/graph.h"
#include "ops/kernel.h"
#include "ops/registry.h"

namespace attune {

/// Name, element type and symbolic shape of a graph input or output.
struct ValueInfo {
  std::string name;
  ElementType type = ElementType::kUndefined;
  std::optional<SymbolicShape> shape;
};

/// Called after each node runs, for profiling.
struct NodeTiming {
  const std::string* node_name;
  const std::string* op_type;
  double start_us;     // since the start of Run
  double duration_us;
  /// The node's inputs as it read them (nullptr for an omitted one) and the
  /// outputs it produced (empty where not wanted); valid during the call only.
  std::span<const Tensor* const> inputs;
  std::span<const Tensor> outputs;
};
using NodeObserver = std::function<void(const NodeTiming&)>;

/// A caller's cache buffer for plan input `input` (a past) and plan output
/// `output` (its present): the past is read as rows [0, length) of the
/// buffer and the new rows are appended after them (ops/kernel.h CacheAppend).
struct PlanCacheBinding {
  int input = -1;
  int output = -1;
  CacheAppend append;
};

/// Called by Plan::Compile for a constant whose only reader keeps it in a form
/// of its own (packed weights), right after that kernel is prepared: the plan
/// holds no copy of it, and the graph's may be released (Graph::ReleaseConstant)
/// before the next weights are packed, so that a model is never held twice.
using HeldConstantCallback = std::function<void(const Value& constant, std::shared_ptr<const ConstantHolder> holder)>;

class Plan {
 public:
  /// Prepares a kernel for every node; fails naming the node when an op is
  /// unsupported or its attributes are invalid.
  static absl::StatusOr<std::unique_ptr<Plan>> Compile(const Graph& graph, const KernelRegistry& registry,
                                                       const ExecOptions& options,
                                                       const HeldConstantCallback& on_held = nullptr);

  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const ExecOptions& options() const { return options_; }

  /// Runs on inputs given in graph-input order; returns outputs in graph-output
  /// order. Thread-safe: every call has its own buffers. `output_buffers`, when
  /// given, holds per graph output a caller-owned tensor (empty = none): a kernel
  /// that allocates that output with the same type and shape writes into it, and
  /// the returned tensor then shares its memory; otherwise the output is returned
  /// in memory of its own. Inputs are never copied.
  ///
  /// `caches`, when given, binds pasts and presents to appended buffers (each
  /// checked with CheckCacheBinding); the bound input's tensor is read for its
  /// shape only, and the bound output is returned as the whole buffer.
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> inputs, const NodeObserver* observer = nullptr,
                                          const std::vector<Tensor>* output_buffers = nullptr,
                                          const std::vector<PlanCacheBinding>* caches = nullptr) const;

  /// OK when plan input `input` (a past) and plan output `output` (its
  /// present) may share one appended buffer: one fused attention node reads
  /// the past as its past_key (past_value), nothing else but shape-only ops
  /// reads it, and the same node produces the present as its present_key
  /// (present_value), read by nothing but Identity nodes up to the output.
  /// FailedPrecondition naming what stands in the way otherwise.
  absl::Status CheckCacheBinding(int input, int output) const;

 private:
  struct Step {
    std::unique_ptr<Kernel> kernel;
    std::string node_name;
    std::string op_type;
    std::vector<int> input_slots;   // -1 for an omitted input
    std::vector<int> output_slots;  // -1 for an omitted output
    std::vector<bool> outputs_wanted;
    std::vector<int> release_after;  // slots whose last reader is this step
  };

  absl::Status CheckInputs(const std::vector<Tensor>& inputs) const;
  /// True when `t` lies in the memory of one of the plan's constants.
  bool SharesConstantMemory(const Tensor& t) const;
  static bool CollectStepBuffers(const Step& step, const std::vector<const Tensor*>& slot_buffers,
                                 std::vector<Tensor>& buffers);

  // Per plan input / graph output: the fused attention step and port that
  // would append it in place (step -1 and the reason when none).
  struct CachePort {
    int step = -1;
    int port = -1;
    std::string why_not;
  };

  ExecOptions options_;
  std::vector<CachePort> past_ports_;
  std::vector<CachePort> present_ports_;
  int num_slots_ = 0;
  std::vector<Step> steps_;
  std::vector<std::pair<int, Tensor>> constants_;
  std::vector<int> input_slots_;
  std::vector<int> output_slots_;
  absl::flat_hash_map<int, int> identity_source_;  // graph output slot -> the computed slot it is an Identity of
  std::vector<ValueInfo> inputs_;
  std::vector<ValueInfo> outputs_;
};

}  // namespace attune
