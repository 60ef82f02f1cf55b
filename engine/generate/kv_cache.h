// The KV cache of a generation run: per cache tensor, two buffers allocated
// once with room for the longest sequence of the run. The current one is
// passed to the model as the past input (a zero-copy view of its dense
// prefix); the model's present output is computed straight into the other,
// which then becomes current. No buffer is allocated or copied by the loop
// after the prompt.
//
// Why two buffers and not one that grows in place: the model reads past as a
// dense (B, H, past, D) tensor and writes present = Concat(past, new) as a
// dense (B, H, past + T, D) one. In one buffer with room for `capacity`
// positions, the first `past` positions of every (b, h) row are not one dense
// block (rows are `capacity` apart), and the executor's tensors have no
// strides, so the graph cannot read them there. Two dense buffers keep every
// tensor the model sees dense, with no allocation per step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

class KvCache {
 public:
  /// One cache tensor: its name (for errors), type, and dense shape at some
  /// length (the length on `seq_axis` is ignored).
  struct Spec {
    std::string name;
    ElementType type = ElementType::kFloat32;
    std::vector<int64_t> shape;
    int seq_axis = 2;
  };

  /// ResourceExhausted when one buffer of `spec` for `capacity` positions exceeds max_bytes.
  static absl::Status CheckSize(const Spec& spec, int64_t capacity, int64_t max_bytes);
  /// Allocates every buffer for `capacity` positions; ResourceExhausted when
  /// one exceeds max_bytes.
  static absl::StatusOr<KvCache> Create(std::vector<Spec> specs, int64_t capacity, int64_t max_bytes);

  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }
  size_t size() const { return specs_.size(); }

  /// Copies a dense tensor (e.g. the prompt's present) into tensor i's current
  /// buffer; its length must equal the others' (set with SetLength).
  absl::Status Load(size_t i, const Tensor& present);
  void SetLength(int64_t length) { length_ = length; }

  /// Tensor i at the current length, borrowing the current buffer.
  absl::StatusOr<Tensor> Past(size_t i) const;
  /// Where tensor i at `new_length` goes: the spare buffer.
  absl::StatusOr<TensorView> Next(size_t i, int64_t new_length) const;
  /// The spare buffers (filled by the model) become current at `new_length`.
  void Advance(int64_t new_length);

 private:
  std::vector<int64_t> ShapeAt(size_t i, int64_t length) const;

  std::vector<Spec> specs_;
  std::vector<Tensor> buffers_[2];  // per spec, 1-D storage of the capacity
  int current_ = 0;
  int64_t length_ = 0;
  int64_t capacity_ = 0;
};

}  // namespace attune
