#include "engine/generate/kv_cache.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"

namespace attune {

absl::Status KvCache::CheckSize(const Spec& spec, int64_t capacity, int64_t max_bytes) {
  if (spec.seq_axis < 0 || spec.seq_axis >= static_cast<int>(spec.shape.size()))
    return absl::InvalidArgumentError(absl::StrCat("cache tensor ", QuoteName(spec.name), ": sequence axis ",
                                                   spec.seq_axis, " outside its shape ", ShapeToString(spec.shape)));
  std::vector<int64_t> full = spec.shape;
  full[spec.seq_axis] = capacity;
  ASSIGN_OR_RETURN(const int64_t elements, CheckedElementCount(full));
  const int64_t bytes = elements * static_cast<int64_t>(ElementSize(spec.type));
  if (bytes > max_bytes)
    return absl::ResourceExhaustedError(
        absl::StrCat("KV cache tensor ", QuoteName(spec.name), " needs ", ShapeToString(full), " ",
                     ElementTypeName(spec.type), " = ", (bytes + (1 << 20) - 1) >> 20, " MiB for ", capacity,
                     " positions, above the limit of ", max_bytes >> 20, " MiB (--max-tensor-mb)"));
  return absl::OkStatus();
}

absl::StatusOr<KvCache> KvCache::Create(std::vector<Spec> specs, int64_t capacity, int64_t max_bytes) {
  KvCache cache;
  cache.specs_ = std::move(specs);
  cache.capacity_ = capacity;
  for (size_t i = 0; i < cache.specs_.size(); ++i) {
    const Spec& spec = cache.specs_[i];
    RETURN_IF_ERROR(CheckSize(spec, capacity, max_bytes));
    ASSIGN_OR_RETURN(const int64_t elements, CheckedElementCount(cache.ShapeAt(i, capacity)));
    if (spec.append && (spec.type != ElementType::kFloat32 || spec.shape.size() != 4 || spec.seq_axis != 2))
      return absl::InternalError(absl::StrCat("cache tensor ", QuoteName(spec.name), " ", ShapeToString(spec.shape),
                                              " cannot be appended (float32 (B, H, S, D) only)"));
    for (int side = 0; side < 2; ++side) {
      Tensor t;
      if (side == 0 || !spec.append) {
        ASSIGN_OR_RETURN(t, Tensor::Create(spec.type, {elements}, max_bytes));
      }
      cache.buffers_[side].push_back(std::move(t));
    }
  }
  cache.rows_finite_ = std::make_unique<bool[]>(cache.specs_.size());
  for (size_t i = 0; i < cache.specs_.size(); ++i) cache.rows_finite_[i] = false;
  return cache;
}

std::vector<int64_t> KvCache::ShapeAt(size_t i, int64_t length) const {
  std::vector<int64_t> shape = specs_[i].shape;
  shape[specs_[i].seq_axis] = length;
  return shape;
}

absl::Status KvCache::Load(size_t i, const Tensor& present) {
  const std::vector<int64_t> expected =
      ShapeAt(i, present.rank() > specs_[i].seq_axis ? present.shape()[specs_[i].seq_axis] : 0);
  if (present.type() != specs_[i].type || present.shape() != expected || expected[specs_[i].seq_axis] > capacity_)
    return absl::InvalidArgumentError(absl::StrCat("present ", QuoteName(specs_[i].name), " is ", present.DebugString(),
                                                   ", expected ", ElementTypeName(specs_[i].type),
                                                   ShapeToString(expected), " within ", capacity_, " positions"));
  if (present.byte_size() == 0) return absl::OkStatus();
  if (!specs_[i].append) {
    std::memcpy(buffers_[current_][i].raw_data(), present.raw_data(), present.byte_size());
    return absl::OkStatus();
  }
  // (B, H, length, D) rows into the first `length` rows of every (b, h) of (B, H, capacity, D).
  const std::vector<int64_t>& shape = present.shape();
  const size_t block = static_cast<size_t>(shape[2] * shape[3]) * sizeof(float);
  const size_t stride = static_cast<size_t>(capacity_ * shape[3]) * sizeof(float);
  auto* dst = static_cast<unsigned char*>(buffers_[0][i].raw_data());
  const auto* src = static_cast<const unsigned char*>(present.raw_data());
  for (int64_t bh = 0; bh < shape[0] * shape[1]; ++bh) std::memcpy(dst + bh * stride, src + bh * block, block);
  rows_finite_[i] = false;  // unknown: the first run checks them
  return absl::OkStatus();
}

absl::StatusOr<Tensor> KvCache::Past(size_t i) const {
  if (specs_[i].append) return absl::InternalError("an appended cache tensor has no dense past");
  return Tensor::Borrow({specs_[i].type, ShapeAt(i, length_), buffers_[current_][i].view().data});
}

absl::StatusOr<TensorView> KvCache::Next(size_t i, int64_t new_length) const {
  if (new_length > capacity_)
    return absl::InternalError(absl::StrCat("KV cache of ", capacity_, " positions cannot hold ", new_length));
  if (specs_[i].append) return absl::InternalError("an appended cache tensor has no spare buffer");
  return TensorView{specs_[i].type, ShapeAt(i, new_length), buffers_[1 - current_][i].view().data};
}

CacheBuffer KvCache::Binding(size_t i) {
  return CacheBuffer{specs_[i].name, specs_[i].present,
                     TensorView{specs_[i].type, ShapeAt(i, capacity_), buffers_[0][i].view().data}, length_,
                     &rows_finite_[i]};
}

void KvCache::Advance(int64_t new_length) {
  current_ = 1 - current_;
  length_ = new_length;
}

}  // namespace attune
