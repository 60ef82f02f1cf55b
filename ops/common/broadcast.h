// Numpy-style (ONNX multidirectional) broadcasting: output shapes, and a plan
// that walks the output in contiguous runs so element-wise loops stay simple.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"

namespace attune {

/// The broadcast of two shapes; InvalidArgument "shapes [2, 3] and [4] cannot
/// broadcast" when a pair of aligned dims differs and neither is 1.
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(std::span<const int64_t> a, std::span<const int64_t> b);
/// The broadcast of any number of shapes (an empty list gives a scalar shape).
absl::StatusOr<std::vector<int64_t>> BroadcastShapes(const std::vector<std::span<const int64_t>>& shapes);
/// True when `from` broadcasts to exactly `to` (ONNX unidirectional broadcasting).
bool IsUnidirectionalBroadcastable(std::span<const int64_t> from, std::span<const int64_t> to);

/// How the inputs of an element-wise op map onto its output. Output dims of
/// size 1 are dropped and neighbouring dims that every input either has in
/// full or broadcasts are merged, so that the innermost merged dim is a run in
/// which each input either advances by one element or repeats one element.
/// Same-shape inputs give one run; a scalar operand repeats; a row vector
/// ([N, C] with [C]) gives N runs of C contiguous elements.
class BroadcastPlan {
 public:
  enum class Kind {
    kSameShape,  // every input has the output's element count: one flat run
    kScalars,    // every input is either full-size or has one element
    kGeneral,
  };

  /// Fails with InvalidArgument when the shapes cannot broadcast.
  static absl::StatusOr<BroadcastPlan> Create(const std::vector<std::span<const int64_t>>& input_shapes);

  const std::vector<int64_t>& output_shape() const { return output_shape_; }
  int64_t num_elements() const { return num_elements_; }
  int num_inputs() const { return num_inputs_; }
  Kind kind() const { return kind_; }
  /// 1 when input k advances along the innermost run, 0 when it repeats one element.
  int64_t inner_step(int k) const { return strides_[k * rank() + rank() - 1]; }

  /// Calls fn(offsets, out_offset, count) for the runs covering output
  /// elements [begin, end), in order: input k's run starts at element
  /// offsets[k] and moves by inner_step(k); the output's starts at out_offset.
  /// N must equal num_inputs().
  template <size_t N, typename Fn>
  void ForEachRun(int64_t begin, int64_t end, Fn&& fn) const;

 private:
  int rank() const { return static_cast<int>(dims_.size()); }

  std::vector<int64_t> output_shape_;
  int64_t num_elements_ = 0;
  int num_inputs_ = 0;
  Kind kind_ = Kind::kGeneral;
  std::vector<int64_t> dims_;     // merged dims, innermost last; never empty
  std::vector<int64_t> strides_;  // [input][merged dim], in elements; 0 where broadcast
};

template <size_t N, typename Fn>
void BroadcastPlan::ForEachRun(int64_t begin, int64_t end, Fn&& fn) const {
  if (begin >= end) return;
  const int outer = rank() - 1;
  const int64_t inner = dims_.back();
  const int64_t* strides = strides_.data();
  const int r = rank();

  absl::InlinedVector<int64_t, 8> index(outer, 0);
  std::array<int64_t, N> base{};
  int64_t row = begin / inner;
  int64_t col = begin % inner;
  for (int j = outer - 1; j >= 0; --j) {
    index[j] = row % dims_[j];
    row /= dims_[j];
    for (size_t k = 0; k < N; ++k) base[k] += index[j] * strides[k * r + j];
  }

  int64_t pos = begin;
  while (true) {
    const int64_t count = std::min(inner - col, end - pos);
    std::array<int64_t, N> offsets;
    for (size_t k = 0; k < N; ++k) offsets[k] = base[k] + col * strides[k * r + outer];
    fn(offsets, pos, count);
    pos += count;
    if (pos >= end) break;
    col = 0;
    for (int j = outer - 1; j >= 0; --j) {
      for (size_t k = 0; k < N; ++k) base[k] += strides[k * r + j];
      if (++index[j] < dims_[j]) break;
      for (size_t k = 0; k < N; ++k) base[k] -= dims_[j] * strides[k * r + j];
      index[j] = 0;
    }
  }
}

}  // namespace attune
