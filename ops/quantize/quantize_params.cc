#include "ops/quantize/quantize_params.h"

#include "absl/strings/str_cat.h"

namespace attune::quantize {

bool IsQuantizedIntType(ElementType type) {
  return type == ElementType::kInt8 || type == ElementType::kUint8 || type == ElementType::kInt16 ||
         type == ElementType::kUint16;
}

absl::StatusOr<IntRange> RangeOf(ElementType type, const std::string& what) {
  switch (type) {
    case ElementType::kInt8: return IntRange{-128, 127};
    case ElementType::kUint8: return IntRange{0, 255};
    case ElementType::kInt16: return IntRange{-32768, 32767};
    case ElementType::kUint16: return IntRange{0, 65535};
    default:
      return absl::UnimplementedError(absl::StrCat(what, " has type ", ElementTypeName(type),
                                                   "; quantized types run are int8, uint8, int16 and uint16"));
  }
}

absl::StatusOr<std::vector<float>> ReadScales(const Tensor& scale, const std::string& what) {
  std::vector<float> out(static_cast<size_t>(scale.num_elements()));
  switch (scale.type()) {
    case ElementType::kFloat32:
      for (size_t i = 0; i < out.size(); ++i) out[i] = scale.data<float>()[i];
      break;
    case ElementType::kFloat16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = HalfToFloat(scale.data<Float16>()[i]);
      break;
    case ElementType::kBFloat16:
      for (size_t i = 0; i < out.size(); ++i) out[i] = BFloat16ToFloat(scale.data<BFloat16>()[i]);
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has type ", ElementTypeName(scale.type()), "; a scale is float32, float16 or bfloat16"));
  }
  return out;
}

absl::StatusOr<std::vector<int32_t>> ReadIntegers(const Tensor& t, const std::string& what) {
  std::vector<int32_t> out(static_cast<size_t>(t.num_elements()));
  auto copy = [&](auto tag) {
    using T = decltype(tag);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<int32_t>(t.data<T>()[i]);
  };
  switch (t.type()) {
    case ElementType::kInt8: copy(int8_t{}); break;
    case ElementType::kUint8: copy(uint8_t{}); break;
    case ElementType::kInt16: copy(int16_t{}); break;
    case ElementType::kUint16: copy(uint16_t{}); break;
    case ElementType::kInt32: copy(int32_t{}); break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat(what, " has type ", ElementTypeName(t.type()), "; expected an integer type"));
  }
  return out;
}

}  // namespace attune::quantize
