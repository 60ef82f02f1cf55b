#include "ops/run_node.h"

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"

namespace attune {

absl::StatusOr<std::vector<Tensor>> RunNode(const Node& node, int opset, const std::vector<Tensor>& inputs,
                                            const KernelRegistry& registry, const RunNodeOptions& options) {
  const std::string label = absl::StrCat("node ", QuoteName(node.name()), " (", node.op_type(), ")");
  if (static_cast<int>(inputs.size()) != node.num_inputs())
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": ", inputs.size(), " input tensors for ", node.num_inputs(), " inputs"));
  KernelInfo info;
  info.node_name = node.name();
  info.op_type = node.op_type();
  info.domain = node.domain();
  info.opset = opset;
  info.attributes = &node.attributes();
  info.num_outputs = node.num_outputs();
  info.options = &options.exec;
  std::vector<const Tensor*> input_ptrs;
  for (int i = 0; i < node.num_inputs(); ++i) {
    const Tensor& t = inputs[i];
    const bool present = node.input(i) != nullptr && !t.empty();
    info.input_present.push_back(present);
    info.constant_inputs.push_back(present && options.inputs_are_constant ? &t : nullptr);
    info.input_types.push_back(present ? std::optional<ElementType>(t.type()) : std::nullopt);
    input_ptrs.push_back(present ? &t : nullptr);
  }
  auto entry = registry.Find(node.domain(), node.op_type(), opset);
  if (!entry.ok()) return Annotate(entry.status(), label);
  auto kernel = (*entry)->factory(info);
  if (!kernel.ok()) return Annotate(kernel.status(), label);

  std::vector<Tensor> outputs(node.num_outputs());
  std::vector<bool> wanted;
  for (const Value* out : node.outputs()) wanted.push_back(out != nullptr);
  KernelContext ctx(std::move(input_ptrs), &outputs, wanted, &options.exec);
  absl::Status status = (*kernel)->Run(ctx);
  if (!status.ok()) return Annotate(status, label);
  for (int o = 0; o < node.num_outputs(); ++o)
    if (wanted[o] && outputs[o].empty())
      return absl::InternalError(absl::StrCat(label, ": kernel did not produce output ", o));
  return outputs;
}

}  // namespace attune
