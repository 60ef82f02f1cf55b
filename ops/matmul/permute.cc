#include "ops/matmul/permute.h"

#include <cstring>
#include <vector>

namespace attune {
namespace {

template <typename Word>
void PermuteWords(const Word* in, Word* out, const std::vector<int64_t>& out_shape,
                  const std::vector<int64_t>& in_strides_for_out, int threads) {
  const int rank = static_cast<int>(out_shape.size());
  const int64_t inner = out_shape[rank - 1];
  const int64_t inner_stride = in_strides_for_out[rank - 1];
  int64_t outer = 1;
  for (int d = 0; d < rank - 1; ++d) outer *= out_shape[d];
#pragma omp parallel for num_threads(threads) schedule(static) if (outer * inner > 32768)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, offset = 0;
    for (int d = rank - 2; d >= 0; --d) {
      offset += (rest % out_shape[d]) * in_strides_for_out[d];
      rest /= out_shape[d];
    }
    Word* dst = out + o * inner;
    const Word* src = in + offset;
    for (int64_t i = 0; i < inner; ++i) dst[i] = src[i * inner_stride];
  }
}

}  // namespace

bool IsIdentityPermutation(std::span<const int> perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int>(i)) return false;
  return true;
}

void PermuteInto(const Tensor& in, std::span<const int> perm, Tensor& out, int threads) {
  if (out.num_elements() == 0) return;
  const int rank = static_cast<int>(perm.size());
  if (rank == 0) {
    std::memcpy(out.raw_data(), in.raw_data(), in.byte_size());
    return;
  }
  std::vector<int64_t> in_strides(rank);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    in_strides[d] = stride;
    stride *= in.shape()[d];
  }
  std::vector<int64_t> strides_for_out(rank);
  for (int d = 0; d < rank; ++d) strides_for_out[d] = in_strides[perm[d]];
  switch (ElementSize(in.type())) {
    case 1: PermuteWords(static_cast<const uint8_t*>(in.raw_data()), static_cast<uint8_t*>(out.raw_data()), out.shape(), strides_for_out, threads); break;
    case 2: PermuteWords(static_cast<const uint16_t*>(in.raw_data()), static_cast<uint16_t*>(out.raw_data()), out.shape(), strides_for_out, threads); break;
    case 4: PermuteWords(static_cast<const uint32_t*>(in.raw_data()), static_cast<uint32_t*>(out.raw_data()), out.shape(), strides_for_out, threads); break;
    case 8: PermuteWords(static_cast<const uint64_t*>(in.raw_data()), static_cast<uint64_t*>(out.raw_data()), out.shape(), strides_for_out, threads); break;
    default: break;
  }
}

absl::StatusOr<Tensor> Permute(const Tensor& in, std::span<const int> perm, int64_t max_bytes, int threads) {
  std::vector<int64_t> shape(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) shape[d] = in.shape()[perm[d]];
  auto out = Tensor::Create(in.type(), std::move(shape), max_bytes);
  if (!out.ok()) return out.status();
  PermuteInto(in, perm, *out, threads);
  return out;
}

}  // namespace attune
