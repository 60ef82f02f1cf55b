// Random blocked N-bit weights for the kernel tests, with the unpacked values
// and zero points a reference reads.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "attune/tensor.h"
#include "core/schema/quantized_matmul.h"
#include "tests/common/random_values.h"

namespace attune::quantized {

enum class ZeroPoints { kNone, kPacked, kFloat };

struct Data {
  qmatmul::QuantizedMatMulParams params;
  std::vector<uint8_t> q;  // unpacked values [n][k_blocks * block]
  Tensor b, scales, zero_points;
  std::vector<float> zp;  // per block, as the kernel reads it
};

inline Data MakeData(int64_t k, int64_t n, int64_t bits, int64_t block, ZeroPoints zps, uint32_t seed) {
  Data d;
  d.params = {k, n, bits, block, 0};
  const int64_t kb = d.params.k_blocks(), blob = d.params.blob_size(), levels = (1 << bits) - 1;
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> qdist(0, static_cast<int>(levels));
  std::uniform_real_distribution<float> sdist(0.001f, 0.05f);
  d.q.resize(n * kb * block);
  for (auto& v : d.q) v = static_cast<uint8_t>(qdist(rng));
  d.b = *Tensor::Create(ElementType::kUint8, {n, kb, blob});
  const int per_byte = 8 / static_cast<int>(bits);
  for (int64_t i = 0; i < n * kb * block; ++i)
    d.b.data<uint8_t>()[i / per_byte] |= static_cast<uint8_t>(d.q[i] << ((i % per_byte) * bits));
  d.scales = *Tensor::Create(ElementType::kFloat32, {n, kb});
  for (auto& s : d.scales.values<float>()) s = sdist(rng) * (rng() % 2 ? 1 : -1);
  d.zp.assign(n * kb, static_cast<float>(1 << (bits - 1)));
  if (zps == ZeroPoints::kPacked) {
    const int64_t row = d.params.zero_point_row_bytes();
    d.zero_points = *Tensor::Create(ElementType::kUint8, {n, row});
    for (int64_t r = 0; r < n; ++r)
      for (int64_t j = 0; j < kb; ++j) {
        const int v = qdist(rng);
        d.zp[r * kb + j] = static_cast<float>(v);
        d.zero_points.data<uint8_t>()[r * row + j / per_byte] |= static_cast<uint8_t>(v << ((j % per_byte) * bits));
      }
  } else if (zps == ZeroPoints::kFloat) {
    d.zero_points = *Tensor::Create(ElementType::kFloat32, {n, kb});
    std::uniform_real_distribution<float> zdist(0.0f, static_cast<float>(levels));
    for (int64_t i = 0; i < n * kb; ++i) d.zp[i] = d.zero_points.data<float>()[i] = zdist(rng);
  }
  return d;
}

inline double Weight(const Data& d, int64_t row, int64_t k) {
  const int64_t kb = d.params.k_blocks(), blk = k / d.params.block_size;
  return (static_cast<double>(d.q[row * kb * d.params.block_size + k]) - d.zp[row * kb + blk]) *
         static_cast<double>(d.scales.data<float>()[row * kb + blk]);
}

inline std::vector<float> RandomRow(int64_t k, uint32_t seed) { return testing::NormalValues(k, seed); }

}  // namespace attune::quantized
