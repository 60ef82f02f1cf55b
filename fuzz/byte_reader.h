// Reads a fuzz input as a stream of small decisions. Past the end every read
// returns 0, so any prefix of an input is itself a valid input (libFuzzer's
// mutations shorten and splice inputs freely).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace attune::fuzz {

class ByteReader {
 public:
  ByteReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  bool empty() const { return pos_ >= size_; }
  uint8_t Byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  /// A value in [lo, hi] (hi - lo below 2^16).
  int64_t Range(int64_t lo, int64_t hi) {
    const uint32_t r = (static_cast<uint32_t>(Byte()) << 8) | Byte();
    return lo + static_cast<int64_t>(r % static_cast<uint32_t>(hi - lo + 1));
  }
  uint32_t U32() {
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | Byte();
    return v;
  }
  float Float() {
    const uint32_t bits = U32();
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
};

}  // namespace attune::fuzz
