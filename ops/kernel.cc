#include "ops/kernel.h"

#include <omp.h>

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/memory/buffer_pool.h"
#include "ops/common/team_monitor.h"

namespace attune {

absl::StatusOr<Tensor*> KernelContext::AllocateOutput(int i, ElementType type, std::vector<int64_t> shape) {
  return Allocate(i, type, std::move(shape), /*zeroed=*/true);
}

absl::StatusOr<Tensor*> KernelContext::AllocateOutputForOverwrite(int i, ElementType type,
                                                                  std::vector<int64_t> shape) {
  return Allocate(i, type, std::move(shape), /*zeroed=*/false);
}

absl::StatusOr<Tensor*> KernelContext::Allocate(int i, ElementType type, std::vector<int64_t> shape, bool zeroed) {
  if (i < 0 || i >= num_outputs()) return absl::InternalError(absl::StrCat("output index ", i, " out of range"));
  if (preassigned_ != nullptr && i < static_cast<int>(preassigned_->size())) {
    const Tensor& buffer = (*preassigned_)[i];
    if (!buffer.empty() && buffer.type() == type && buffer.shape() == shape) {
      void* data = const_cast<void*>(buffer.raw_data());
      if (buffer.byte_size() > 0) {
        if (zeroed) {
          std::memset(data, 0, buffer.byte_size());
        } else {
          PoisonUninitialized(data, buffer.byte_size());
        }
      }
      (*outputs_)[i] = buffer;
      return &(*outputs_)[i];
    }
  }
  auto t = zeroed ? Tensor::Create(type, std::move(shape), options_->max_tensor_bytes)
                  : Tensor::CreateUninitialized(type, std::move(shape), options_->max_tensor_bytes);
  if (!t.ok()) return t.status();
  (*outputs_)[i] = *std::move(t);
  return &(*outputs_)[i];
}

int KernelContext::threads() const {
  return EffectiveThreads(options_->threads > 0 ? options_->threads : omp_get_max_threads());
}

}  // namespace attune
