// Inputs for the API tests: the reference input of models/mha_causal and
// variants of it that differ per thread in shape and values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "attune/tensor.h"
#include "engine/io/npy.h"
#include "gtest/gtest.h"
#include "tests/common/paths.h"

namespace attune::testing {

inline std::string MhaCausalDir() { return SourceDir() + "/models/mha_causal"; }

/// models/mha_causal/inputs/x.npy, float32 [2, 11, 64].
inline Tensor ReadMhaCausalInput() {
  auto x = ReadNpyFile(MhaCausalDir() + "/inputs/x.npy");
  EXPECT_TRUE(x.ok()) << x.status();
  return x.ok() ? *x : Tensor();
}

/// Variant k of x: the first 11 - k % 4 positions, scaled by 1 + k / 8, in a
/// caller-owned vector (so runs can borrow it). Different sequence lengths make
/// concurrent runs hit different shapes, and different values make a run that
/// read another run's scratch memory visibly wrong.
inline std::vector<float> InputVariant(const Tensor& x, int k, std::vector<int64_t>* shape) {
  const int64_t batch = x.shape()[0], seq = x.shape()[1], width = x.shape()[2];
  const int64_t keep = seq - k % 4;
  const float scale = 1.0f + static_cast<float>(k) / 8.0f;
  std::vector<float> values;
  values.reserve(batch * keep * width);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < keep; ++t)
      for (int64_t c = 0; c < width; ++c) values.push_back(x.data<float>()[(b * seq + t) * width + c] * scale);
  *shape = {batch, keep, width};
  return values;
}

/// A tensor over `values` without a copy.
inline Tensor BorrowFloats(std::vector<float>& values, const std::vector<int64_t>& shape) {
  auto t = Tensor::Borrow(TensorView{ElementType::kFloat32, shape, values.data()});
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Tensor();
}

}  // namespace attune::testing
