#include "ops/kernel.h"

#include <omp.h>

#include <cstring>

#include "absl/strings/str_cat.h"

namespace attune {

absl::StatusOr<Tensor*> KernelContext::AllocateOutput(int i, ElementType type, std::vector<int64_t> shape) {
  if (i < 0 || i >= num_outputs()) return absl::InternalError(absl::StrCat("output index ", i, " out of range"));
  if (preassigned_ != nullptr && i < static_cast<int>(preassigned_->size())) {
    const Tensor& buffer = (*preassigned_)[i];
    if (!buffer.empty() && buffer.type() == type && buffer.shape() == shape) {
      // Kernels rely on AllocateOutput's zero fill (accumulating ones do).
      if (buffer.byte_size() > 0) std::memset(const_cast<void*>(buffer.raw_data()), 0, buffer.byte_size());
      (*outputs_)[i] = buffer;
      return &(*outputs_)[i];
    }
  }
  auto t = Tensor::Create(type, std::move(shape), options_->max_tensor_bytes);
  if (!t.ok()) return t.status();
  (*outputs_)[i] = *std::move(t);
  return &(*outputs_)[i];
}

int KernelContext::threads() const {
  return options_->threads > 0 ? options_->threads : omp_get_max_threads();
}

}  // namespace attune
