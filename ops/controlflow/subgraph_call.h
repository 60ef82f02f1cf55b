// Internal to ops/controlflow: what If, Loop and Scan share. A subgraph's
// inputs are its own (the formal ones the op defines) followed by the outer
// values it reads, which are the node's last inputs (Graph::outer_scope_inputs).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/kernel.h"
#include "ops/subgraph_evaluator.h"

namespace attune::controlflow {

/// One compiled subgraph and how it is called.
class SubgraphCall {
 public:
  /// Compiles the subgraph held by attribute `attribute`; checks that it has
  /// `formal_inputs` inputs of its own and `outputs` outputs (-1: any),
  /// naming the attribute and both counts otherwise.
  static absl::StatusOr<SubgraphCall> Prepare(const KernelInfo& info, std::string_view attribute, int formal_inputs,
                                              int outputs);

  /// Inputs of the node before its outer-scope values (the op's own inputs).
  static absl::StatusOr<int> OwnInputs(const KernelInfo& info, std::string_view attribute);

  int num_outputs() const { return num_outputs_; }
  /// The declared element type of output i (kUndefined when not declared).
  ElementType output_type(int i) const { return output_types_[i]; }

  /// Runs on `formal` (its own inputs) and the node's outer-scope values.
  absl::StatusOr<std::vector<Tensor>> Run(std::vector<Tensor> formal, const KernelContext& ctx) const;

 private:
  std::shared_ptr<const PreparedSubgraph> prepared_;
  std::string attribute_;
  int own_node_inputs_ = 0;  // the node's inputs before the outer-scope values
  int num_outputs_ = 0;
  std::vector<ElementType> output_types_;
};

/// The tensor a one-element input holds, as bool ("cond") or int64 ("M");
/// InvalidArgument naming `what` and the tensor's type and shape otherwise.
absl::StatusOr<bool> OneBool(const Tensor& t, std::string_view what);
absl::StatusOr<int64_t> OneInt64(const Tensor& t, std::string_view what);

/// Slice `index` of `t` along `axis`, that axis removed (a copy).
absl::StatusOr<Tensor> SliceAlongAxis(const Tensor& t, int64_t axis, int64_t index, int64_t max_bytes);

/// Stacks `parts` (all of one type and shape) along a new axis `axis` of the
/// result; `reverse` puts the first part last. With no parts the result has
/// `type` and shape `empty_shape` with a 0 inserted at `axis`.
absl::StatusOr<Tensor> StackAlongAxis(const std::vector<Tensor>& parts, int64_t axis, bool reverse,
                                      ElementType type, const std::vector<int64_t>& empty_shape,
                                      int64_t max_bytes);

/// Checks that a per-iteration output keeps the first iteration's type and
/// shape (scan outputs are stacked) and that all of them together stay under
/// the tensor limit; `bytes` accumulates their size.
absl::Status CheckScanPart(const std::vector<Tensor>& parts, const Tensor& next, std::string_view what,
                           int64_t& bytes, int64_t max_bytes);

}  // namespace attune::controlflow
