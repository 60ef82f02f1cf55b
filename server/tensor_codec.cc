#include "server/tensor_codec.h"

#include <cmath>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "server/datatype.h"

namespace attune::server {
namespace {

using nlohmann::json;

absl::Status ElementError(const std::string& name, int64_t index, ElementType type, const json& value) {
  return absl::InvalidArgumentError(absl::StrCat("input '", name, "': element ", index, " (",
                                                 value.dump(-1, ' ', false, json::error_handler_t::replace),
                                                 ") is not a valid ", DatatypeName(type)));
}

template <typename T>
bool IntegerValue(const json& v, T* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    *out = static_cast<T>(u);
    return true;
  }
  if (v.is_number_integer()) {
    const int64_t i = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<T>) {
      if (i < 0 || static_cast<uint64_t>(i) > static_cast<uint64_t>(std::numeric_limits<T>::max())) return false;
    } else {
      if (i < std::numeric_limits<T>::min() || i > std::numeric_limits<T>::max()) return false;
    }
    *out = static_cast<T>(i);
    return true;
  }
  return false;
}

// Writes element `index` of `t` from `v`; false when `v` does not fit the type.
bool StoreElement(Tensor& t, int64_t index, const json& v) {
  switch (t.type()) {
    case ElementType::kBool:
      if (v.is_boolean()) {
        t.data<bool>()[index] = v.get<bool>();
        return true;
      }
      if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1)) {
        t.data<bool>()[index] = v.get<int64_t>() == 1;
        return true;
      }
      return false;
    case ElementType::kUint8: return IntegerValue(v, &t.data<uint8_t>()[index]);
    case ElementType::kUint16: return IntegerValue(v, &t.data<uint16_t>()[index]);
    case ElementType::kUint32: return IntegerValue(v, &t.data<uint32_t>()[index]);
    case ElementType::kUint64: return IntegerValue(v, &t.data<uint64_t>()[index]);
    case ElementType::kInt8: return IntegerValue(v, &t.data<int8_t>()[index]);
    case ElementType::kInt16: return IntegerValue(v, &t.data<int16_t>()[index]);
    case ElementType::kInt32: return IntegerValue(v, &t.data<int32_t>()[index]);
    case ElementType::kInt64: return IntegerValue(v, &t.data<int64_t>()[index]);
    default: break;
  }
  if (!v.is_number()) return false;
  const double d = v.get<double>();
  switch (t.type()) {
    case ElementType::kFloat32: t.data<float>()[index] = static_cast<float>(d); return true;
    case ElementType::kFloat64: t.data<double>()[index] = d; return true;
    case ElementType::kFloat16: t.data<Float16>()[index] = FloatToHalf(static_cast<float>(d)); return true;
    case ElementType::kBFloat16: t.data<BFloat16>()[index] = FloatToBFloat16(static_cast<float>(d)); return true;
    default: return false;
  }
}

template <typename T>
json NumberArray(const Tensor& t) {
  json out = json::array();
  auto& array = out.get_ref<json::array_t&>();
  array.reserve(t.num_elements());
  for (T v : t.values<T>()) {
    if constexpr (std::is_floating_point_v<T>) {
      if (!std::isfinite(v)) {
        array.emplace_back(nullptr);
        continue;
      }
    }
    array.emplace_back(v);
  }
  return out;
}

json HalfArray(const Tensor& t) {
  json out = json::array();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const float f = t.type() == ElementType::kFloat16 ? HalfToFloat(t.data<Float16>()[i])
                                                      : BFloat16ToFloat(t.data<BFloat16>()[i]);
    out.push_back(std::isfinite(f) ? json(f) : json(nullptr));
  }
  return out;
}

}  // namespace

absl::StatusOr<int64_t> CheckedTensorBytes(const std::string& name, ElementType type,
                                           const std::vector<int64_t>& shape, int64_t max_bytes) {
  auto count = CheckedElementCount(shape);
  if (!count.ok())
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': shape ", ShapeToString(shape), " is invalid"));
  const int64_t size = static_cast<int64_t>(ElementSize(type));
  if (size == 0)
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': datatype ", DatatypeName(type),
                                                   " is not supported by Attune tensors"));
  if (*count > max_bytes / size)
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': ", ShapeToString(shape), " ",
                                                   DatatypeName(type), " exceeds the tensor size limit of ",
                                                   max_bytes, " bytes"));
  return *count * size;
}

absl::StatusOr<Tensor> TensorFromJson(const std::string& name, const json& data, ElementType type,
                                      const std::vector<int64_t>& shape, int64_t max_bytes) {
  auto bytes = CheckedTensorBytes(name, type, shape, max_bytes);
  if (!bytes.ok()) return bytes.status();
  if (!data.is_array())
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': \"data\" must be an array"));
  auto tensor = Tensor::Create(type, shape, max_bytes);
  if (!tensor.ok()) return absl::InvalidArgumentError(absl::StrCat("input '", name, "': ", tensor.status().message()));
  const int64_t expected = tensor->num_elements();
  int64_t count = 0;
  // Depth-first over nested arrays with an explicit stack (the depth is bounded by the request's nesting check).
  std::vector<std::pair<const json*, size_t>> stack{{&data, 0}};
  while (!stack.empty()) {
    auto& [array, next] = stack.back();
    if (next == array->size()) {
      stack.pop_back();
      continue;
    }
    const json& v = (*array)[next++];
    if (v.is_array()) {
      stack.emplace_back(&v, 0);
      continue;
    }
    if (count >= expected)
      return absl::InvalidArgumentError(absl::StrCat("input '", name, "': \"data\" has more than the ", expected,
                                                     " elements of shape ", ShapeToString(shape)));
    if (!StoreElement(*tensor, count, v)) return ElementError(name, count, type, v);
    ++count;
  }
  if (count != expected)
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': \"data\" has ", count, " elements, shape ",
                                                   ShapeToString(shape), " needs ", expected));
  return tensor;
}

absl::StatusOr<Tensor> TensorFromBytes(const std::string& name, std::string_view bytes, ElementType type,
                                       const std::vector<int64_t>& shape, int64_t max_bytes) {
  auto size = CheckedTensorBytes(name, type, shape, max_bytes);
  if (!size.ok()) return size.status();
  if (static_cast<int64_t>(bytes.size()) != *size)
    return absl::InvalidArgumentError(absl::StrCat("input '", name, "': ", bytes.size(), " bytes of data, ",
                                                   ShapeToString(shape), " ", DatatypeName(type), " needs ", *size));
  auto tensor = Tensor::CreateUninitialized(type, shape, max_bytes);
  if (!tensor.ok()) return absl::InvalidArgumentError(absl::StrCat("input '", name, "': ", tensor.status().message()));
  if (!bytes.empty()) std::memcpy(tensor->raw_data(), bytes.data(), bytes.size());
  if (type == ElementType::kBool)  // a bool byte other than 0 or 1 is undefined behaviour when read as bool
    for (int64_t i = 0; i < tensor->num_elements(); ++i) {
      auto* b = static_cast<unsigned char*>(tensor->raw_data()) + i;
      if (*b > 1)
        return absl::InvalidArgumentError(absl::StrCat("input '", name, "': BOOL byte ", i, " is ", int{*b},
                                                       ", not 0 or 1"));
    }
  return tensor;
}

std::string_view TensorBytes(const Tensor& tensor) {
  return {static_cast<const char*>(tensor.raw_data()), tensor.byte_size()};
}

json TensorToJson(const Tensor& t) {
  switch (t.type()) {
    case ElementType::kBool: {
      json out = json::array();
      for (bool b : t.values<bool>()) out.push_back(b);
      return out;
    }
    case ElementType::kUint8: return NumberArray<uint8_t>(t);
    case ElementType::kUint16: return NumberArray<uint16_t>(t);
    case ElementType::kUint32: return NumberArray<uint32_t>(t);
    case ElementType::kUint64: return NumberArray<uint64_t>(t);
    case ElementType::kInt8: return NumberArray<int8_t>(t);
    case ElementType::kInt16: return NumberArray<int16_t>(t);
    case ElementType::kInt32: return NumberArray<int32_t>(t);
    case ElementType::kInt64: return NumberArray<int64_t>(t);
    case ElementType::kFloat32: return NumberArray<float>(t);
    case ElementType::kFloat64: return NumberArray<double>(t);
    case ElementType::kFloat16:
    case ElementType::kBFloat16: return HalfArray(t);
    default: return json::array();
  }
}

int JsonNestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') ++i;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    else if (c == ']' || c == '}') --depth;
  }
  return deepest;
}

}  // namespace attune::server
