#include "ops/kernel.h"

#include <omp.h>

#include "absl/strings/str_cat.h"

namespace attune {

absl::StatusOr<Tensor*> KernelContext::AllocateOutput(int i, ElementType type, std::vector<int64_t> shape) {
  if (i < 0 || i >= num_outputs()) return absl::InternalError(absl::StrCat("output index ", i, " out of range"));
  auto t = Tensor::Create(type, std::move(shape), options_->max_tensor_bytes);
  if (!t.ok()) return t.status();
  (*outputs_)[i] = *std::move(t);
  return &(*outputs_)[i];
}

int KernelContext::threads() const {
  return options_->threads > 0 ? options_->threads : omp_get_max_threads();
}

}  // namespace attune
