// Element types of Attune tensors; the numbering is ONNX's TensorProto.DataType.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "attune/export.h"

namespace attune {

/// The element type of a tensor; values are ONNX TensorProto.DataType codes.
enum class ElementType : int32_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUint8 = 2,
  kInt8 = 3,
  kUint16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUint32 = 12,
  kUint64 = 13,
  kBFloat16 = 16,
};

/// Bytes per element, or 0 for types Attune cannot store (string, undefined).
ATTUNE_API size_t ElementSize(ElementType type);
/// Lower-case name such as "float32"; "undefined(N)" for unknown codes.
ATTUNE_API const char* ElementTypeName(ElementType type);
/// True for the ONNX codes Attune can hold in a Tensor.
ATTUNE_API bool IsSupportedElementType(int32_t onnx_code);

/// Maps a C++ type to its ElementType (float -> kFloat32, ...).
template <typename T> struct ElementTypeOf;
template <> struct ElementTypeOf<float> { static constexpr ElementType value = ElementType::kFloat32; };
template <> struct ElementTypeOf<double> { static constexpr ElementType value = ElementType::kFloat64; };
template <> struct ElementTypeOf<int8_t> { static constexpr ElementType value = ElementType::kInt8; };
template <> struct ElementTypeOf<uint8_t> { static constexpr ElementType value = ElementType::kUint8; };
template <> struct ElementTypeOf<int16_t> { static constexpr ElementType value = ElementType::kInt16; };
template <> struct ElementTypeOf<uint16_t> { static constexpr ElementType value = ElementType::kUint16; };
template <> struct ElementTypeOf<int32_t> { static constexpr ElementType value = ElementType::kInt32; };
template <> struct ElementTypeOf<uint32_t> { static constexpr ElementType value = ElementType::kUint32; };
template <> struct ElementTypeOf<int64_t> { static constexpr ElementType value = ElementType::kInt64; };
template <> struct ElementTypeOf<uint64_t> { static constexpr ElementType value = ElementType::kUint64; };
template <> struct ElementTypeOf<bool> { static constexpr ElementType value = ElementType::kBool; };

}  // namespace attune

namespace attune {

/// IEEE 754 half precision, stored as its bit pattern.
struct Float16 {
  uint16_t bits = 0;
};
/// bfloat16, stored as its bit pattern (the high half of a float32).
struct BFloat16 {
  uint16_t bits = 0;
};
template <> struct ElementTypeOf<Float16> { static constexpr ElementType value = ElementType::kFloat16; };
template <> struct ElementTypeOf<BFloat16> { static constexpr ElementType value = ElementType::kBFloat16; };

/// Exact conversion of a half to float.
ATTUNE_API float HalfToFloat(Float16 h);
/// Round-to-nearest-even conversion of a float to half.
ATTUNE_API Float16 FloatToHalf(float f);
/// Exact conversion of a bfloat16 to float.
ATTUNE_API float BFloat16ToFloat(BFloat16 h);
/// Round-to-nearest-even conversion of a float to bfloat16.
ATTUNE_API BFloat16 FloatToBFloat16(float f);

}  // namespace attune
