// The ONNX element types narrower than 16 bits: the float8 formats, float4e2m1
// and the 4- and 2-bit integers. A tensor holds one element per byte (the
// float formats as their bit pattern, the integers as an int8 / uint8 value
// in range); files hold the 4- and 2-bit types packed, first element in the
// lowest bits, and the importer and exporter unpack and pack them.
#pragma once

#include <cstdint>
#include <string>

#include "attune/element_type.h"

namespace attune {

// ONNX TensorProto.DataType codes of the narrow types.
inline constexpr ElementType kFloat8E4M3FN = static_cast<ElementType>(17);
inline constexpr ElementType kFloat8E4M3FNUZ = static_cast<ElementType>(18);
inline constexpr ElementType kFloat8E5M2 = static_cast<ElementType>(19);
inline constexpr ElementType kFloat8E5M2FNUZ = static_cast<ElementType>(20);
inline constexpr ElementType kUint4 = static_cast<ElementType>(21);
inline constexpr ElementType kInt4 = static_cast<ElementType>(22);
inline constexpr ElementType kFloat4E2M1 = static_cast<ElementType>(23);
inline constexpr ElementType kFloat8E8M0 = static_cast<ElementType>(24);
inline constexpr ElementType kUint2 = static_cast<ElementType>(25);
inline constexpr ElementType kInt2 = static_cast<ElementType>(26);

/// True for the ten narrow types above.
bool IsNarrowType(ElementType type);
/// Elements a file packs into one byte: 2 for the 4-bit types, 4 for the
/// 2-bit ones, 1 for every other type.
int ElementsPerFileByte(ElementType type);

/// How a float becomes float8e8m0 (a power of two): ONNX's round_mode.
enum class E8M0Rounding { kUp, kDown, kNearest };

/// The value of one narrow element as a float (exact; NaN where the format
/// has one). `bits` is the byte a tensor holds.
float NarrowToFloat(ElementType type, uint8_t bits);
/// A float as a narrow element, rounding to nearest even. Float formats:
/// with `saturate`, +-inf and values beyond the largest finite one become
/// that value; without, they become inf (float8e5m2) or NaN. Integer types
/// truncate toward zero and keep the low bits (two's complement), as a
/// wider integer cast does; NaN gives 0. float4e2m1 has no inf or NaN: it
/// saturates and NaN gives -0 (0x8).
uint8_t FloatToNarrow(ElementType type, float x, bool saturate = true,
                      E8M0Rounding rounding = E8M0Rounding::kUp);
/// An integer as a narrow element: integer types keep the low bits; float
/// types go through FloatToNarrow.
uint8_t IntegerToNarrow(ElementType type, int64_t x, bool saturate = true,
                        E8M0Rounding rounding = E8M0Rounding::kUp);

/// Unpacks `count` elements of a 4- or 2-bit type from packed file bytes
/// (ceil(count / per_byte) of them) into one byte each, sign-extending int4
/// and int2.
void UnpackNarrow(ElementType type, const uint8_t* packed, int64_t count, uint8_t* out);
/// Packs `count` one-byte elements into file bytes, zero padding the last.
std::string PackNarrow(ElementType type, const uint8_t* elements, int64_t count);

}  // namespace attune
