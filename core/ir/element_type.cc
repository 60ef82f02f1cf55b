#include "attune/element_type.h"

#include <bit>
#include <cstring>

#include "core/ir/narrow_types.h"
#include "core/ir/round_through_type.h"

namespace attune {

size_t ElementSize(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: case ElementType::kInt32: case ElementType::kUint32: return 4;
    case ElementType::kFloat64: case ElementType::kInt64: case ElementType::kUint64: return 8;
    case ElementType::kFloat16: case ElementType::kBFloat16: case ElementType::kInt16:
    case ElementType::kUint16: return 2;
    case ElementType::kInt8: case ElementType::kUint8: case ElementType::kBool: return 1;
    default: return IsNarrowType(type) ? 1 : 0;  // one element per byte in memory
  }
}

const char* ElementTypeName(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "float32";
    case ElementType::kUint8: return "uint8";
    case ElementType::kInt8: return "int8";
    case ElementType::kUint16: return "uint16";
    case ElementType::kInt16: return "int16";
    case ElementType::kInt32: return "int32";
    case ElementType::kInt64: return "int64";
    case ElementType::kString: return "string";
    case ElementType::kBool: return "bool";
    case ElementType::kFloat16: return "float16";
    case ElementType::kFloat64: return "float64";
    case ElementType::kUint32: return "uint32";
    case ElementType::kUint64: return "uint64";
    case ElementType::kBFloat16: return "bfloat16";
    default: break;
  }
  switch (static_cast<int32_t>(type)) {
    case 17: return "float8e4m3fn";
    case 18: return "float8e4m3fnuz";
    case 19: return "float8e5m2";
    case 20: return "float8e5m2fnuz";
    case 21: return "uint4";
    case 22: return "int4";
    case 23: return "float4e2m1";
    case 24: return "float8e8m0";
    case 25: return "uint2";
    case 26: return "int2";
    default: return "undefined";
  }
}

bool IsSupportedElementType(int32_t onnx_code) {
  return ElementSize(static_cast<ElementType>(onnx_code)) != 0;
}

float HalfToFloat(Float16 h) {
  const uint32_t sign = (h.bits & 0x8000u) << 16;
  uint32_t exponent = (h.bits >> 10) & 0x1f;
  uint32_t mantissa = h.bits & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // Subnormal half: normalise into a float exponent.
    exponent = 113;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      --exponent;
    }
    bits = sign | (exponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  return std::bit_cast<float>(bits);
}

Float16 FloatToHalf(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or nan
    return {static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0))};
  }
  if (abs >= 0x477ff000u) return {static_cast<uint16_t>(sign | 0x7c00u)};  // rounds to inf
  if (abs < 0x38800000u) {  // result is subnormal or zero
    if (abs < 0x33000000u) return {sign};
    const uint32_t exponent = abs >> 23;
    const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24
    uint32_t half = mantissa >> shift;
    const uint32_t rest = mantissa & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1))) ++half;
    return {static_cast<uint16_t>(sign | half)};
  }
  uint32_t half = ((abs >> 13) - (112u << 10));
  const uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1))) ++half;
  return {static_cast<uint16_t>(sign | half)};
}

float BFloat16ToFloat(BFloat16 h) { return std::bit_cast<float>(static_cast<uint32_t>(h.bits) << 16); }

BFloat16 FloatToBFloat16(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return {static_cast<uint16_t>((x >> 16) | 0x40)};
  x += 0x7fffu + ((x >> 16) & 1);
  return {static_cast<uint16_t>(x >> 16)};
}

float RoundThroughType(ElementType type, float x) {
  if (type == ElementType::kFloat16) return HalfToFloat(FloatToHalf(x));
  if (type == ElementType::kBFloat16) return BFloat16ToFloat(FloatToBFloat16(x));
  return x;
}

}  // namespace attune
