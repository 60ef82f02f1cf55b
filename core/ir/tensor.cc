#include "attune/tensor.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/memory/buffer_pool.h"

namespace attune {
namespace {

std::shared_ptr<void> Allocate(size_t bytes, bool zeroed) {
  void* p = AcquireBuffer(bytes);
  if (p == nullptr) return nullptr;
  if (zeroed) {
    std::memset(p, 0, bytes);
  } else {
    PoisonUninitialized(p, bytes);
  }
  return std::shared_ptr<void>(p, [bytes](void* q) { ReleaseBuffer(q, bytes); });
}

}  // namespace

absl::StatusOr<int64_t> CheckedElementCount(std::span<const int64_t> shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat("negative dimension in shape ", ShapeToString(shape)));
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d)
      return absl::InvalidArgumentError(absl::StrCat("element count of shape ", ShapeToString(shape), " overflows int64"));
    count *= d;
  }
  return count;
}

std::string ShapeToString(std::span<const int64_t> shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

absl::StatusOr<Tensor> Tensor::Create(ElementType type, std::vector<int64_t> shape, int64_t max_bytes) {
  return Allocated(type, std::move(shape), max_bytes, /*zeroed=*/true);
}

absl::StatusOr<Tensor> Tensor::CreateUninitialized(ElementType type, std::vector<int64_t> shape, int64_t max_bytes) {
  return Allocated(type, std::move(shape), max_bytes, /*zeroed=*/false);
}

absl::StatusOr<Tensor> Tensor::Allocated(ElementType type, std::vector<int64_t> shape, int64_t max_bytes,
                                         bool zeroed) {
  const size_t element_size = ElementSize(type);
  if (element_size == 0)
    return absl::UnimplementedError(absl::StrCat("unsupported element type ", ElementTypeName(type), " (",
                                                 static_cast<int>(type), ")"));
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status();
  if (*count > max_bytes / static_cast<int64_t>(element_size))
    return absl::ResourceExhaustedError(absl::StrCat("tensor ", ElementTypeName(type), ShapeToString(shape),
                                                     " exceeds the size limit of ", max_bytes, " bytes"));
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.num_elements_ = *count;
  t.storage_ = Allocate(static_cast<size_t>(*count) * element_size, zeroed);
  if (t.storage_ == nullptr)
    return absl::ResourceExhaustedError(absl::StrCat("out of memory allocating tensor ", t.DebugString()));
  t.data_ = t.storage_.get();
  return t;
}

absl::StatusOr<Tensor> Tensor::Borrow(const TensorView& view) {
  if (ElementSize(view.type) == 0)
    return absl::InvalidArgumentError(absl::StrCat("unsupported element type ", ElementTypeName(view.type)));
  auto count = CheckedElementCount(view.shape);
  if (!count.ok()) return count.status();
  if (view.data == nullptr && *count != 0) return absl::InvalidArgumentError("TensorView has no data");
  Tensor t;
  t.type_ = view.type;
  t.shape_ = view.shape;
  t.num_elements_ = *count;
  t.data_ = view.data;
  return t;
}

absl::StatusOr<Tensor> Tensor::Shared(ElementType type, std::vector<int64_t> shape, void* data,
                                      std::shared_ptr<const void> owner) {
  const size_t element_size = ElementSize(type);
  if (element_size == 0)
    return absl::InvalidArgumentError(absl::StrCat("unsupported element type ", ElementTypeName(type)));
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status();
  if (owner == nullptr) return absl::InvalidArgumentError("Tensor::Shared: no owner keeps the data alive");
  if (data == nullptr && *count != 0) return absl::InvalidArgumentError("Tensor::Shared: no data");
  if (reinterpret_cast<uintptr_t>(data) % element_size != 0)
    return absl::InvalidArgumentError(absl::StrCat("Tensor::Shared: data is not aligned to the ",
                                                   ElementTypeName(type), " element size of ", element_size,
                                                   " bytes"));
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.num_elements_ = *count;
  // The owner is held, never dereferenced: its constness does not reach data_.
  t.storage_ = std::const_pointer_cast<void>(std::move(owner));
  t.data_ = data;
  return t;
}

absl::StatusOr<Tensor> Tensor::Reshaped(std::vector<int64_t> shape) const {
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status();
  if (*count != num_elements_)
    return absl::InvalidArgumentError(absl::StrCat("cannot reshape ", DebugString(), " to ", ShapeToString(shape)));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  if (empty()) return Tensor();
  Tensor t = *Create(type_, shape_, std::numeric_limits<int64_t>::max());
  if (byte_size() > 0) std::memcpy(t.data_, data_, byte_size());
  return t;
}

std::string Tensor::DebugString() const { return absl::StrCat(ElementTypeName(type_), ShapeToString(shape_)); }

}  // namespace attune
