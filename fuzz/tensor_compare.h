// Byte-exact tensor equality, for the parsers' round trips.
#pragma once

#include <cstring>

#include "attune/tensor.h"

namespace attune::fuzz {

inline bool SameTensor(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && a.shape() == b.shape() && a.byte_size() == b.byte_size() &&
         (a.byte_size() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0);
}

}  // namespace attune::fuzz
