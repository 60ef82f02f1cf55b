// Tensors: Tensor owns (or shares) its data; TensorView wraps caller memory without a copy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/element_type.h"
#include "attune/export.h"

namespace attune {

/// Default cap on one tensor's size, overridable per session.
inline constexpr int64_t kDefaultMaxTensorBytes = int64_t{16} << 30;

/// Element count of a shape; fails on negative dims or int64 overflow.
ATTUNE_API absl::StatusOr<int64_t> CheckedElementCount(std::span<const int64_t> shape);
/// "[2, 3, 4]" for logs and error messages.
ATTUNE_API std::string ShapeToString(std::span<const int64_t> shape);

/// A non-owning view of caller memory: element type, shape and a data pointer.
struct TensorView {
  ElementType type = ElementType::kUndefined;
  std::vector<int64_t> shape;
  void* data = nullptr;
};

/// A dense row-major tensor. Copies share the same buffer (a handle, like
/// std::shared_ptr); Clone() makes an independent copy.
class ATTUNE_API Tensor {
 public:
  /// An empty tensor of undefined type.
  Tensor() = default;

  /// A zero-filled tensor; fails on a bad shape, an unsupported type or a size
  /// above max_bytes.
  static absl::StatusOr<Tensor> Create(ElementType type, std::vector<int64_t> shape,
                                       int64_t max_bytes = kDefaultMaxTensorBytes);
  /// Like Create, but the contents are unspecified: for code that writes
  /// every element before any is read (Attune's kernels, for the outputs they
  /// overwrite). Saves the zero fill, a full extra write of the buffer.
  static absl::StatusOr<Tensor> CreateUninitialized(ElementType type, std::vector<int64_t> shape,
                                                    int64_t max_bytes = kDefaultMaxTensorBytes);
  /// A tensor that uses the caller's memory without copying; the caller keeps
  /// it alive and unchanged for as long as the tensor is used.
  static absl::StatusOr<Tensor> Borrow(const TensorView& view);
  /// A tensor over `data`, which `owner` keeps valid: the tensor and every copy
  /// of it hold a reference to `owner` until they are destroyed, so the memory
  /// lives as long as any of them (the importer passes a file mapping).
  /// `data` must hold the shape's bytes and be aligned to the element size (not
  /// necessarily to 64 bytes). Attune never writes to a model's constants, but
  /// the Tensor API hands out non-const pointers: give writable memory, or a
  /// private (copy-on-write) mapping, that nothing else changes while `owner`
  /// lives. Errors: InvalidArgument for an unsupported type, a bad shape, no
  /// owner, a null `data` with elements, or misaligned `data`.
  static absl::StatusOr<Tensor> Shared(ElementType type, std::vector<int64_t> shape, void* data,
                                       std::shared_ptr<const void> owner);
  /// A tensor holding a copy of `values` with the given shape.
  template <typename T>
  static absl::StatusOr<Tensor> FromVector(std::vector<int64_t> shape, const std::vector<T>& values);
  /// A rank-0 tensor holding `value`.
  template <typename T>
  static Tensor Scalar(T value);

  /// Element type; kUndefined for an empty tensor.
  ElementType type() const { return type_; }
  /// Dimensions, outermost first.
  const std::vector<int64_t>& shape() const { return shape_; }
  /// Number of dimensions.
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  /// Product of the dimensions (1 for a scalar).
  int64_t num_elements() const { return num_elements_; }
  /// num_elements() * ElementSize(type()).
  size_t byte_size() const { return num_elements_ * ElementSize(type_); }
  /// True for a default-constructed tensor.
  bool empty() const { return type_ == ElementType::kUndefined; }

  /// Raw data pointer (64-byte aligned when Attune allocated it).
  void* raw_data() { return data_; }
  const void* raw_data() const { return data_; }
  /// Typed data pointer; T must match type().
  template <typename T> T* data() { return static_cast<T*>(data_); }
  template <typename T> const T* data() const { return static_cast<const T*>(data_); }
  /// Typed span over all elements; T must match type().
  template <typename T> std::span<T> values() { return {data<T>(), static_cast<size_t>(num_elements_)}; }
  template <typename T> std::span<const T> values() const {
    return {data<T>(), static_cast<size_t>(num_elements_)};
  }

  /// The same buffer seen with another shape of the same element count.
  absl::StatusOr<Tensor> Reshaped(std::vector<int64_t> shape) const;
  /// An independent deep copy.
  Tensor Clone() const;
  /// A view of this tensor's memory.
  TensorView view() const { return {type_, shape_, data_}; }
  /// "float32[2, 3]".
  std::string DebugString() const;

 private:
  static absl::StatusOr<Tensor> Allocated(ElementType type, std::vector<int64_t> shape, int64_t max_bytes,
                                          bool zeroed);
  ElementType type_ = ElementType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t num_elements_ = 0;
  std::shared_ptr<void> storage_;
  void* data_ = nullptr;
};

template <typename T>
absl::StatusOr<Tensor> Tensor::FromVector(std::vector<int64_t> shape, const std::vector<T>& values) {
  auto t = Create(ElementTypeOf<T>::value, std::move(shape));
  if (!t.ok()) return t.status();
  if (static_cast<size_t>(t->num_elements()) != values.size())
    return absl::InvalidArgumentError("Tensor::FromVector: value count does not match the shape");
  std::copy(values.begin(), values.end(), t->template data<T>());
  return t;
}

template <typename T>
Tensor Tensor::Scalar(T value) {
  Tensor t = *Create(ElementTypeOf<T>::value, {});
  *t.data<T>() = value;
  return t;
}

}  // namespace attune
