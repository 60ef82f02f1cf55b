#include "engine/pattern/constants.h"

#include <cmath>
#include <variant>

namespace attune::pattern {

const Tensor* ConstantOf(const Value* value) {
  // Bounded so that a malformed graph with an Identity cycle cannot hang us.
  for (int depth = 0; value != nullptr && depth < 64; ++depth) {
    if (const Tensor* t = value->constant()) return t;
    const Node* producer = value->producer();
    if (producer == nullptr || !producer->domain().empty()) return nullptr;
    if (producer->op_type() == "Identity") {
      value = producer->input(0);
      continue;
    }
    if (producer->op_type() == "Constant") {
      auto it = producer->attributes().all().find("value");
      if (it == producer->attributes().all().end()) return nullptr;
      return std::get_if<Tensor>(&it->second);
    }
    return nullptr;
  }
  return nullptr;
}

std::optional<double> ElementAsDouble(const Tensor& t, int64_t i) {
  if (i < 0 || i >= t.num_elements()) return std::nullopt;
  switch (t.type()) {
    case ElementType::kFloat32: return t.data<float>()[i];
    case ElementType::kFloat64: return t.data<double>()[i];
    case ElementType::kFloat16: return HalfToFloat(t.data<Float16>()[i]);
    case ElementType::kBFloat16: return BFloat16ToFloat(t.data<BFloat16>()[i]);
    case ElementType::kInt8: return t.data<int8_t>()[i];
    case ElementType::kUint8: return t.data<uint8_t>()[i];
    case ElementType::kInt16: return t.data<int16_t>()[i];
    case ElementType::kUint16: return t.data<uint16_t>()[i];
    case ElementType::kInt32: return t.data<int32_t>()[i];
    case ElementType::kUint32: return t.data<uint32_t>()[i];
    case ElementType::kInt64: return static_cast<double>(t.data<int64_t>()[i]);
    case ElementType::kUint64: return static_cast<double>(t.data<uint64_t>()[i]);
    case ElementType::kBool: return t.data<bool>()[i] ? 1.0 : 0.0;
    default: return std::nullopt;
  }
}

std::optional<std::vector<double>> TensorAsDoubles(const Tensor& t) {
  std::vector<double> out;
  out.reserve(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    auto v = ElementAsDouble(t, i);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::optional<double> UniformValue(const Tensor& t) {
  if (t.num_elements() < 1) return std::nullopt;
  auto first = ElementAsDouble(t, 0);
  if (!first || std::isnan(*first)) return std::nullopt;
  for (int64_t i = 1; i < t.num_elements(); ++i) {
    auto v = ElementAsDouble(t, i);
    if (!v || *v != *first) return std::nullopt;
  }
  return first;
}

std::optional<std::vector<int64_t>> TensorAsInts(const Tensor& t) {
  if (t.rank() > 1) return std::nullopt;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (t.type() == ElementType::kInt64) {
      out.push_back(t.data<int64_t>()[i]);
    } else if (t.type() == ElementType::kInt32) {
      out.push_back(t.data<int32_t>()[i]);
    } else {
      return std::nullopt;
    }
  }
  return out;
}

}  // namespace attune::pattern
