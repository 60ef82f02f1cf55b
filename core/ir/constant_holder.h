// The interface between a released constant and what keeps its data.
#pragma once

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

/// Where the data of a released constant lives now: a kernel that keeps the
/// constant in a form of its own (packed weights) holds it, and the graph keeps
/// only its type and shape (Graph::ReleaseConstant), so that a model's weights
/// are not held twice. Restore gives the data back as the constant had it.
class ConstantHolder {
 public:
  virtual ~ConstantHolder() = default;
  /// The constant as it was: same element type, shape and values.
  virtual absl::StatusOr<Tensor> Restore() const = 0;
};

}  // namespace attune
