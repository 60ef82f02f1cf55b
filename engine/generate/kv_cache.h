// The KV cache of a generation run, allocated once with room for the longest
// sequence of the run. Each cache tensor takes one of two paths:
//
// Appended (Spec::append): one buffer (B, H, capacity, D). The model reads
// the past where it lies (the fused attention kernel takes K/V through
// strides, head stride capacity·D) and writes only each step's new rows, at
// positions [length, length + T), through a CacheBuffer binding
// (include/attune/session.h). Nothing is copied between steps, and no row
// below `length` is written again. Used when the Session says the pair is
// safe to bind (Session::CheckCacheBuffer: the past is read only by a fused
// attention node and shape-only ops, the present is that node's).
//
// Ping-pong (otherwise, e.g. attention not fused or a present computed by a
// plain Concat): two dense buffers. The current one is passed as the past
// input (a zero-copy view of its dense prefix); the model's present output,
// Concat(past, new) written whole, is computed straight into the other, which
// then becomes current. A dense (B, H, past, D) tensor cannot be a prefix of
// one (B, H, capacity, D) buffer, and a graph that reads the past itself
// needs dense tensors (Attune's tensors have no strides), hence two buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "attune/tensor.h"

namespace attune {

class KvCache {
 public:
  /// One cache tensor: its past input and present output names, type, and
  /// dense shape at some length (the length on `seq_axis` is ignored).
  struct Spec {
    std::string name;  // the past input
    ElementType type = ElementType::kFloat32;
    std::vector<int64_t> shape;
    int seq_axis = 2;
    std::string present;  // the present output (for the appended path)
    bool append = false;  // the appended path (needs float32, rank 4, seq_axis 2)
  };

  /// ResourceExhausted when one buffer of `spec` for `capacity` positions exceeds max_bytes.
  static absl::Status CheckSize(const Spec& spec, int64_t capacity, int64_t max_bytes);
  /// Allocates every buffer for `capacity` positions; ResourceExhausted when
  /// one exceeds max_bytes.
  static absl::StatusOr<KvCache> Create(std::vector<Spec> specs, int64_t capacity, int64_t max_bytes);

  int64_t length() const { return length_; }
  int64_t capacity() const { return capacity_; }
  size_t size() const { return specs_.size(); }
  bool appended(size_t i) const { return specs_[i].append; }

  /// Copies a dense tensor (e.g. the prompt's present) into tensor i's current
  /// buffer (rows [0, its length) of an appended one); its length must equal
  /// the others' (set with SetLength).
  absl::Status Load(size_t i, const Tensor& present);
  void SetLength(int64_t length) { length_ = length; }

  /// Ping-pong tensor i at the current length, borrowing the current buffer.
  absl::StatusOr<Tensor> Past(size_t i) const;
  /// Where ping-pong tensor i at `new_length` goes: the spare buffer.
  absl::StatusOr<TensorView> Next(size_t i, int64_t new_length) const;
  /// Appended tensor i as a binding for Session::RunInto: the model reads
  /// rows [0, length) and appends its new rows after them.
  CacheBuffer Binding(size_t i);
  /// The appended rows and the spare buffers (filled by the model) become
  /// current at `new_length`.
  void Advance(int64_t new_length);

 private:
  std::vector<int64_t> ShapeAt(size_t i, int64_t length) const;

  std::vector<Spec> specs_;
  std::vector<Tensor> buffers_[2];  // per spec, 1-D storage of the capacity; appended: buffers_[0] only
  // Per appended tensor, whether its rows so far are known finite (read and
  // updated by the attention kernel through CacheBuffer::rows_finite).
  std::unique_ptr<bool[]> rows_finite_;
  int current_ = 0;
  int64_t length_ = 0;
  int64_t capacity_ = 0;
};

}  // namespace attune
