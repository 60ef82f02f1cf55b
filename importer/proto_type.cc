#include "importer/proto_type.h"

namespace attune::importer {

TypeInfo ReadType(const onnx::TypeProto& type) {
  TypeInfo info;
  switch (type.value_case()) {
    case onnx::TypeProto::kTensorType: break;
    case onnx::TypeProto::kSequenceType: info.kind = "sequence"; return info;
    case onnx::TypeProto::kMapType: info.kind = "map"; return info;
    case onnx::TypeProto::kOptionalType: info.kind = "optional"; return info;
    case onnx::TypeProto::kSparseTensorType: info.kind = "sparse tensor"; return info;
    default: info.kind = "no type"; return info;
  }
  info.is_tensor = true;
  info.kind = "tensor";
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  info.elem_type = tensor.elem_type();
  if (!tensor.has_shape()) return info;
  SymbolicShape shape;
  shape.reserve(tensor.shape().dim_size());
  for (const auto& dim : tensor.shape().dim()) {
    // A negative dim_value is not valid ONNX; some exporters mean "dynamic" by it.
    if (dim.has_dim_value() && dim.dim_value() >= 0) shape.push_back(Dim::Known(dim.dim_value()));
    else if (dim.has_dim_param() && !dim.dim_param().empty()) shape.push_back(Dim::Symbol(dim.dim_param()));
    else shape.push_back(Dim());
  }
  info.shape = std::move(shape);
  return info;
}

void WriteTensorType(ElementType type, const std::optional<SymbolicShape>& shape, onnx::TypeProto* proto) {
  onnx::TypeProto::Tensor* tensor = proto->mutable_tensor_type();
  tensor->set_elem_type(static_cast<int32_t>(type));
  if (!shape) return;
  onnx::TensorShapeProto* out = tensor->mutable_shape();
  for (const Dim& d : *shape) {
    onnx::TensorShapeProto::Dimension* dim = out->add_dim();
    if (d.is_known()) dim->set_dim_value(d.value());
    else if (d.is_symbol()) dim->set_dim_param(d.symbol());
  }
}

}  // namespace attune::importer
