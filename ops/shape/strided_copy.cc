#include "ops/shape/strided_copy.h"

#include <omp.h>

#include <algorithm>
#include <cstring>

namespace attune {
namespace {

// Below this many bytes a copy runs on one thread: waking a team costs more.
constexpr int64_t kMinBytesPerThread = int64_t{1} << 16;
// Edge of the 2-D tiles of the transposing path, in elements.
constexpr int64_t kTile = 32;

struct Layout {
  std::vector<int64_t> shape;
  std::vector<int64_t> src;  // source strides
  std::vector<int64_t> dst;  // destination (dense) strides
};

// Drops size-1 dims and merges neighbours that are contiguous in both src and dst.
Layout Coalesce(const std::vector<int64_t>& shape, const std::vector<int64_t>& src_strides) {
  Layout l;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!l.shape.empty() && l.src.back() == src_strides[d] * shape[d]) {
      l.shape.back() *= shape[d];
      l.src.back() = src_strides[d];
      continue;
    }
    l.shape.push_back(shape[d]);
    l.src.push_back(src_strides[d]);
  }
  l.dst.assign(l.shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(l.shape.size()) - 2; d >= 0; --d) l.dst[d] = l.dst[d + 1] * l.shape[d + 1];
  return l;
}

// Walks the multi-index of the dims in `dims` (outermost first) from a flat start.
class Odometer {
 public:
  Odometer(const Layout& l, std::vector<int> dims, int64_t start) : l_(l), dims_(std::move(dims)), idx_(dims_.size()) {
    for (int64_t k = static_cast<int64_t>(dims_.size()) - 1; k >= 0; --k) {
      const int64_t n = l_.shape[dims_[k]];
      idx_[k] = start % n;
      start /= n;
      src_ += idx_[k] * l_.src[dims_[k]];
      dst_ += idx_[k] * l_.dst[dims_[k]];
    }
  }
  int64_t src() const { return src_; }
  int64_t dst() const { return dst_; }
  void Next() {
    for (int64_t k = static_cast<int64_t>(dims_.size()) - 1; k >= 0; --k) {
      const int d = dims_[k];
      src_ += l_.src[d];
      dst_ += l_.dst[d];
      if (++idx_[k] < l_.shape[d]) return;
      src_ -= l_.src[d] * l_.shape[d];
      dst_ -= l_.dst[d] * l_.shape[d];
      idx_[k] = 0;
    }
  }

 private:
  const Layout& l_;
  std::vector<int> dims_;
  std::vector<int64_t> idx_;
  int64_t src_ = 0;
  int64_t dst_ = 0;
};

// Runs body(begin, end) over [0, n) split into one contiguous range per thread.
template <typename F>
void ParallelRanges(int64_t n, int threads, F body) {
  if (threads <= 1 || n <= 1) {
    body(int64_t{0}, n);
    return;
  }
  threads = static_cast<int>(std::min<int64_t>(threads, n));
#pragma omp parallel num_threads(threads)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = n * t / nt, end = n * (t + 1) / nt;
    if (begin < end) body(begin, end);
  }
}

template <typename U>
void CopyRows(const U* src, U* dst, const Layout& l, int threads) {
  const int rank = static_cast<int>(l.shape.size());
  const int64_t inner = l.shape[rank - 1];
  const int64_t inner_stride = l.src[rank - 1];
  std::vector<int> outer_dims;
  int64_t rows = 1;
  for (int d = 0; d < rank - 1; ++d) {
    outer_dims.push_back(d);
    rows *= l.shape[d];
  }
  ParallelRanges(rows, threads, [&](int64_t begin, int64_t end) {
    Odometer it(l, outer_dims, begin);
    for (int64_t r = begin; r < end; ++r, it.Next()) {
      const U* s = src + it.src();
      U* o = dst + it.dst();
      if (inner_stride == 1) {
        std::memcpy(o, s, inner * sizeof(U));
      } else if (inner_stride == 0) {
        std::fill(o, o + inner, *s);
      } else {
        for (int64_t j = 0; j < inner; ++j) o[j] = s[j * inner_stride];
      }
    }
  });
}

// The source's unit-stride dim `k` is not the output's last dim: copy 2-D tiles
// of (dim k, last dim) so that both reads and writes stay within cache lines.
template <typename U>
void CopyTiles(const U* src, U* dst, const Layout& l, int k, int threads) {
  const int rank = static_cast<int>(l.shape.size());
  const int last = rank - 1;
  const int64_t rows_k = l.shape[k], cols = l.shape[last];
  const int64_t dst_k = l.dst[k], src_last = l.src[last];
  std::vector<int> outer_dims;
  int64_t outer = 1;
  for (int d = 0; d < last; ++d)
    if (d != k) {
      outer_dims.push_back(d);
      outer *= l.shape[d];
    }
  const int64_t row_blocks = (rows_k + kTile - 1) / kTile;
  ParallelRanges(outer * row_blocks, threads, [&](int64_t begin, int64_t end) {
    Odometer it(l, outer_dims, begin / row_blocks);
    int64_t block = begin % row_blocks;
    for (int64_t w = begin; w < end; ++w) {
      const int64_t i0 = block * kTile, i1 = std::min(rows_k, i0 + kTile);
      const U* s = src + it.src();
      U* o = dst + it.dst();
      for (int64_t j0 = 0; j0 < cols; j0 += kTile) {
        const int64_t j1 = std::min(cols, j0 + kTile);
        for (int64_t i = i0; i < i1; ++i)
          for (int64_t j = j0; j < j1; ++j) o[i * dst_k + j] = s[i + j * src_last];
      }
      if (++block == row_blocks) {
        block = 0;
        it.Next();
      }
    }
  });
}

template <typename U>
void CopyTyped(const void* src_v, void* dst_v, const Layout& l, int threads) {
  const U* src = static_cast<const U*>(src_v);
  U* dst = static_cast<U*>(dst_v);
  const int rank = static_cast<int>(l.shape.size());
  if (rank == 0) {
    *dst = *src;
    return;
  }
  if (l.src[rank - 1] != 1 && l.src[rank - 1] != 0 && l.shape[rank - 1] >= 4) {
    for (int k = 0; k < rank - 1; ++k)
      if (l.src[k] == 1 && l.shape[k] >= 4) return CopyTiles(src, dst, l, k, threads);
  }
  CopyRows(src, dst, l, threads);
}

}  // namespace

int ThreadsForBytes(int64_t bytes, int max_threads) {
  return static_cast<int>(std::clamp<int64_t>(bytes / kMinBytesPerThread, 1, std::max(max_threads, 1)));
}

void StridedCopy(const void* src, void* dst, std::vector<int64_t> shape, std::vector<int64_t> src_strides,
                 size_t elem_size, int threads) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  if (count == 0) return;
  const Layout l = Coalesce(shape, src_strides);
  threads = ThreadsForBytes(count * static_cast<int64_t>(elem_size), threads);
  switch (elem_size) {
    case 1: return CopyTyped<uint8_t>(src, dst, l, threads);
    case 2: return CopyTyped<uint16_t>(src, dst, l, threads);
    case 4: return CopyTyped<uint32_t>(src, dst, l, threads);
    case 8: return CopyTyped<uint64_t>(src, dst, l, threads);
    default: break;
  }
}

}  // namespace attune
