#include "core/ir/narrow_types.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace attune {
namespace {

// A small binary float format: sign, exponent and mantissa bits.
struct FloatFormat {
  int mantissa_bits;
  int bias;
  uint8_t sign_bit;
  uint8_t max_code;  // the largest finite magnitude's code
  bool unsigned_zero;  // the "FNUZ" formats: no -0, NaN is 0x80 alone
};

constexpr FloatFormat kE4M3FN{3, 7, 0x80, 0x7e, false};
constexpr FloatFormat kE4M3FNUZ{3, 8, 0x80, 0x7f, true};
constexpr FloatFormat kE5M2{2, 15, 0x80, 0x7b, false};
constexpr FloatFormat kE5M2FNUZ{2, 16, 0x80, 0x7f, true};
constexpr FloatFormat kE2M1{1, 1, 0x08, 0x07, false};

const FloatFormat* FormatOf(ElementType type) {
  if (type == kFloat8E4M3FN) return &kE4M3FN;
  if (type == kFloat8E4M3FNUZ) return &kE4M3FNUZ;
  if (type == kFloat8E5M2) return &kE5M2;
  if (type == kFloat8E5M2FNUZ) return &kE5M2FNUZ;
  if (type == kFloat4E2M1) return &kE2M1;
  return nullptr;
}

// The magnitude a code (sign bit clear) stands for, NaN and inf aside.
double MagnitudeOf(const FloatFormat& f, uint8_t code) {
  const int exponent = code >> f.mantissa_bits;
  const int mantissa = code & ((1 << f.mantissa_bits) - 1);
  if (exponent == 0) return std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);
  return std::ldexp((1 << f.mantissa_bits) + mantissa, exponent - f.bias - f.mantissa_bits);
}

float DecodeFloat(ElementType type, const FloatFormat& f, uint8_t bits) {
  const bool negative = (bits & f.sign_bit) != 0;
  const uint8_t code = bits & static_cast<uint8_t>(f.sign_bit - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.unsigned_zero && bits == 0x80) return nan;
  if (type == kFloat8E4M3FN && code == 0x7f) return negative ? -nan : nan;
  if (type == kFloat8E5M2 && (code >> 2) == 31) {
    const float special = (code & 3) == 0 ? std::numeric_limits<float>::infinity() : nan;
    return negative ? -special : special;
  }
  const float magnitude = static_cast<float>(MagnitudeOf(f, code));
  return negative ? -magnitude : magnitude;
}

// What a value beyond the largest finite one becomes without saturation.
uint8_t OverflowCode(ElementType type, const FloatFormat& f, bool negative) {
  const uint8_t sign = negative ? f.sign_bit : 0;
  if (type == kFloat8E5M2) return sign | 0x7c;  // inf
  if (type == kFloat8E4M3FN) return sign | 0x7f;  // NaN
  if (f.unsigned_zero) return 0x80;  // NaN
  return sign | f.max_code;  // float4e2m1 has neither: it saturates
}

uint8_t NanCode(ElementType type, const FloatFormat& f, bool negative) {
  const uint8_t sign = negative ? f.sign_bit : 0;
  if (f.unsigned_zero) return 0x80;
  if (type == kFloat8E4M3FN) return sign | 0x7f;
  if (type == kFloat8E5M2) return sign | 0x7e;
  return 0x08;  // float4e2m1 has no NaN: it becomes -0, as ONNX's reference does
}

// The code of a magnitude that the format holds exactly.
uint8_t CodeOf(const FloatFormat& f, double r) {
  int e;
  std::frexp(r, &e);
  const int exponent = e - 1;
  const int min_exponent = 1 - f.bias;
  if (exponent < min_exponent)  // subnormal
    return static_cast<uint8_t>(r / std::ldexp(1.0, min_exponent - f.mantissa_bits));
  const int mantissa = static_cast<int>(r / std::ldexp(1.0, exponent - f.mantissa_bits)) - (1 << f.mantissa_bits);
  return static_cast<uint8_t>(((exponent + f.bias) << f.mantissa_bits) | mantissa);
}

uint8_t EncodeFloat(ElementType type, const FloatFormat& f, float x, bool saturate) {
  const bool negative = std::signbit(x);
  const uint8_t sign = negative ? f.sign_bit : 0;
  const uint8_t zero = f.unsigned_zero ? 0 : sign;
  if (std::isnan(x)) return NanCode(type, f, negative);
  const double a = std::fabs(static_cast<double>(x));
  const double max = MagnitudeOf(f, f.max_code);
  if (std::isinf(a)) return saturate ? (sign | f.max_code) : OverflowCode(type, f, negative);
  if (a == 0) return zero;
  int e;
  std::frexp(a, &e);
  const int exponent = std::max(e - 1, 1 - f.bias);
  const double quantum = std::ldexp(1.0, exponent - f.mantissa_bits);
  const double rounded = std::nearbyint(a / quantum) * quantum;  // ties to even
  if (rounded > max) return saturate ? (sign | f.max_code) : OverflowCode(type, f, negative);
  if (rounded == 0) return zero;
  return sign | CodeOf(f, rounded);
}

// float8e8m0: an unsigned power of two 2^(bits - 127); 0xff is NaN. The
// rounding works on the float's exponent and fraction bits as ONNX defines.
uint8_t EncodeE8M0(float x, bool saturate, E8M0Rounding rounding) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  uint32_t exponent = (bits >> 23) & 0xff;
  if (exponent == 0xff) return 0xff;
  bool round_up = false;
  if (rounding == E8M0Rounding::kUp) {
    round_up = (bits & 0x7fffffu) != 0;
  } else if (rounding == E8M0Rounding::kNearest) {
    const bool guard = (bits & 0x400000u) != 0;
    const bool round = (bits & 0x200000u) != 0;
    const bool sticky = (bits & 0x1fffffu) != 0;
    round_up = guard && (round || sticky || exponent > 0);
  }
  if (saturate && exponent == 0xfe) round_up = false;
  return static_cast<uint8_t>(exponent + (round_up ? 1 : 0));
}

int IntegerBits(ElementType type) {
  if (type == kInt4 || type == kUint4) return 4;
  if (type == kInt2 || type == kUint2) return 2;
  return 0;
}

// The low `width` bits of x, sign-extended for the signed types.
uint8_t WrapInteger(ElementType type, int64_t x) {
  const int width = IntegerBits(type);
  const uint8_t mask = static_cast<uint8_t>((1 << width) - 1);
  uint8_t low = static_cast<uint8_t>(static_cast<uint64_t>(x) & mask);
  const bool is_signed = type == kInt4 || type == kInt2;
  if (is_signed && (low & (1 << (width - 1)))) low |= static_cast<uint8_t>(~mask);
  return low;
}

}  // namespace

bool IsNarrowType(ElementType type) {
  const auto code = static_cast<int32_t>(type);
  return code >= 17 && code <= 26;
}

int ElementsPerFileByte(ElementType type) {
  const int bits = type == kFloat4E2M1 ? 4 : IntegerBits(type);
  return bits == 0 ? 1 : 8 / bits;
}

float NarrowToFloat(ElementType type, uint8_t bits) {
  if (const FloatFormat* f = FormatOf(type)) return DecodeFloat(type, *f, bits);
  if (type == kFloat8E8M0)
    return bits == 0xff ? std::numeric_limits<float>::quiet_NaN() : std::ldexp(1.0f, static_cast<int>(bits) - 127);
  if (type == kInt4 || type == kInt2) return static_cast<int8_t>(bits);
  return bits;
}

uint8_t FloatToNarrow(ElementType type, float x, bool saturate, E8M0Rounding rounding) {
  if (const FloatFormat* f = FormatOf(type)) return EncodeFloat(type, *f, x, saturate);
  if (type == kFloat8E8M0) return EncodeE8M0(x, saturate, rounding);
  if (!std::isfinite(x)) return 0;
  // fmod keeps the low bits exactly, however large x is.
  return WrapInteger(type, static_cast<int64_t>(std::fmod(std::trunc(x), 256.0)));
}

uint8_t IntegerToNarrow(ElementType type, int64_t x, bool saturate, E8M0Rounding rounding) {
  if (IntegerBits(type) != 0) return WrapInteger(type, x);
  return FloatToNarrow(type, static_cast<float>(x), saturate, rounding);
}

void UnpackNarrow(ElementType type, const uint8_t* packed, int64_t count, uint8_t* out) {
  const int per_byte = ElementsPerFileByte(type);
  const int width = 8 / per_byte;
  const uint8_t mask = static_cast<uint8_t>((1 << width) - 1);
  for (int64_t i = 0; i < count; ++i) {
    const uint8_t raw = (packed[i / per_byte] >> (width * (i % per_byte))) & mask;
    out[i] = type == kFloat4E2M1 ? raw : WrapInteger(type, raw);
  }
}

std::string PackNarrow(ElementType type, const uint8_t* elements, int64_t count) {
  const int per_byte = ElementsPerFileByte(type);
  const int width = 8 / per_byte;
  const uint8_t mask = static_cast<uint8_t>((1 << width) - 1);
  std::string packed(static_cast<size_t>((count + per_byte - 1) / per_byte), '\0');
  for (int64_t i = 0; i < count; ++i)
    packed[i / per_byte] = static_cast<char>(packed[i / per_byte] | ((elements[i] & mask) << (width * (i % per_byte))));
  return packed;
}

}  // namespace attune
