// Dense copy of a strided view: the engine behind Transpose, Slice, Expand and Tile.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace attune {

/// Writes the dense row-major tensor of `shape` whose element at index i is
/// src[sum_d i[d] * src_strides[d]] (strides in elements, may be 0 or negative).
/// elem_size must be 1, 2, 4 or 8. Dims are coalesced first; when the source's
/// unit-stride dim is not the output's last, the copy runs in cache-sized 2-D tiles.
void StridedCopy(const void* src, void* dst, std::vector<int64_t> shape, std::vector<int64_t> src_strides,
                 size_t elem_size, int threads);

/// How many of `max_threads` a memory-bound copy of `bytes` should use.
int ThreadsForBytes(int64_t bytes, int max_threads);

}  // namespace attune
