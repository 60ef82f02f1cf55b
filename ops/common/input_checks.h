// Input checks that kernels of several families share; each failure is one
// line that names the node.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "attune/tensor.h"
#include "ops/kernel.h"

namespace attune {

// Input 0 of a channels-first op: X of shape [N, C, ...], rank 2 or more.
inline absl::StatusOr<const Tensor*> ChannelsFirstInput(const KernelContext& ctx, const std::string& label) {
  const Tensor* x = ctx.input(0);
  if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs input X"));
  if (x->shape().size() < 2)
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": input X ", ShapeToString(x->shape()), " must have rank 2 or more ([N, C, ...])"));
  return x;
}

}  // namespace attune
