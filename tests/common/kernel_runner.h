// Runs one kernel from the default registry on given inputs, for op unit tests.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/attribute.h"
#include "ops/attention/attention_backend.h"
#include "ops/kernel.h"

namespace attune::testing {

struct KernelCall {
  std::string op_type;
  std::string domain;  // "" = ai.onnx
  int opset = 17;
  Attributes attributes;
  /// Inputs; an empty Tensor stands for an omitted optional input.
  std::vector<Tensor> inputs;
  int num_outputs = 1;
  /// Inputs the kernel may see as constants at prepare time (by index).
  std::vector<int> constant_inputs;
  ExecOptions options;  // tests choose the attention backend here, hence its header above
};

/// Creates the kernel through DefaultKernelRegistry() and runs it once.
absl::StatusOr<std::vector<Tensor>> RunKernel(const KernelCall& call);

}  // namespace attune::testing
