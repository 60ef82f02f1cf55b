// What ScatterND and ScatterElements share about their inputs: presence and
// types of data, indices and updates, reading an index, and the error for an
// index outside its axis.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/kernel.h"

namespace attune::scatter {

struct Operands {
  const Tensor* data;
  const Tensor* indices;
  const Tensor* updates;
};

/// The three inputs, all present, data of rank >= 1, updates of data's type
/// and indices int64 (or int32 when `allow_int32`); InvalidArgument naming
/// the node and the input otherwise.
absl::StatusOr<Operands> ReadOperands(const KernelContext& ctx, bool allow_int32, const std::string& label);

/// Element `i` of an int32 or int64 tensor (ReadOperands checked which).
inline int64_t IndexAt(const Tensor& indices, int64_t i) {
  return indices.type() == ElementType::kInt64 ? indices.data<int64_t>()[i]
                                               : static_cast<int64_t>(indices.data<int32_t>()[i]);
}

/// True when `index` addresses an axis of size `dim`: [-dim, dim), negative
/// counting from the end.
inline bool IndexInRange(int64_t index, int64_t dim) { return index >= -dim && index < dim; }

/// InvalidArgument for element `flat` of `indices` (holding `index`) outside
/// axis `axis` of `data`, with the element's position and the valid range.
absl::Status IndexOutOfRange(const std::string& label, const Tensor& indices, int64_t flat, int64_t index,
                             int64_t axis, const Tensor& data);

}  // namespace attune::scatter
