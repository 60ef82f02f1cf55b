#include "tests/common/kernel_runner.h"

#include <algorithm>

#include "core/common/status_macros.h"
#include "ops/registry.h"

namespace attune::testing {

absl::StatusOr<std::vector<Tensor>> RunKernel(const KernelCall& call) {
  ASSIGN_OR_RETURN(const KernelRegistry::Entry* entry,
                   DefaultKernelRegistry().Find(call.domain, call.op_type, call.opset));
  KernelInfo info;
  info.node_name = "test_node";
  info.op_type = call.op_type;
  info.domain = call.domain;
  info.opset = call.opset;
  info.attributes = &call.attributes;
  info.num_outputs = call.num_outputs;
  info.options = &call.options;
  std::vector<const Tensor*> inputs;
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    const Tensor& t = call.inputs[i];
    const bool present = !t.empty();
    info.input_present.push_back(present);
    const bool constant = std::find(call.constant_inputs.begin(), call.constant_inputs.end(),
                                    static_cast<int>(i)) != call.constant_inputs.end();
    info.constant_inputs.push_back(present && constant ? &t : nullptr);
    info.input_types.push_back(present ? std::optional<ElementType>(t.type()) : std::nullopt);
    inputs.push_back(present ? &t : nullptr);
  }
  ASSIGN_OR_RETURN(std::unique_ptr<Kernel> kernel, entry->factory(info));
  std::vector<Tensor> outputs(call.num_outputs);
  KernelContext ctx(inputs, &outputs, std::vector<bool>(call.num_outputs, true), &call.options);
  RETURN_IF_ERROR(kernel->Run(ctx));
  return outputs;
}

}  // namespace attune::testing
