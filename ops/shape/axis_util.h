// Axis and index-input helpers shared by the shape and reduce kernel families.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/kernel.h"

namespace attune {

/// Maps an ONNX axis in [-rank, rank) to [0, rank); InvalidArgument naming `what` otherwise.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, std::string_view what);

/// Normalizes a list of axes against `rank`; rejects out-of-range and repeated axes.
absl::StatusOr<std::vector<int64_t>> NormalizeAxes(const std::vector<int64_t>& axes, int64_t rank,
                                                   std::string_view what);

/// Which integer element types an index-like input accepts.
enum class IndexTypes { kInt64Only, kInt32OrInt64 };

/// The values of an integer tensor as int64 (any rank); InvalidArgument naming `what` on another type.
absl::StatusOr<std::vector<int64_t>> ReadIndexValues(const Tensor& t, std::string_view what, IndexTypes types);

/// Same, for a 1-D tensor (rank 0 rejected).
absl::StatusOr<std::vector<int64_t>> ReadIndexVector(const Tensor& t, std::string_view what, IndexTypes types);

/// The single value of a rank-0 (or one-element 1-D) integer tensor.
absl::StatusOr<int64_t> ReadIndexScalar(const Tensor& t, std::string_view what, IndexTypes types);

/// Input i of the kernel, or InvalidArgument "<op>: missing input <name>" when omitted.
absl::StatusOr<const Tensor*> RequiredInput(const KernelContext& ctx, int i, std::string_view op, std::string_view name);

/// Row-major strides (in elements) of a dense tensor of `shape`.
std::vector<int64_t> DenseStrides(const std::vector<int64_t>& shape);

/// Product of shape[begin, end), saturated at INT64_MAX.
int64_t DimProduct(const std::vector<int64_t>& shape, int64_t begin, int64_t end);

}  // namespace attune
