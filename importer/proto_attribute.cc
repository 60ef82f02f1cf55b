#include "importer/proto_attribute.h"

#include <type_traits>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune::importer {
namespace {

using Proto = onnx::AttributeProto;

std::string Where(std::string_view op_type, std::string_view node_name, const std::string& attribute) {
  return absl::StrCat("node ", Sv(op_type), " ", QuoteName(node_name), ": attribute ", QuoteName(attribute));
}

}  // namespace

Proto::AttributeType AttributeTypeOf(const Proto& a) {
  if (a.type() != Proto::UNDEFINED) return a.type();
  // Models from before IR version 2 carry no type: the field that is set says it.
  if (a.has_f()) return Proto::FLOAT;
  if (a.has_i()) return Proto::INT;
  if (a.has_s()) return Proto::STRING;
  if (a.has_t()) return Proto::TENSOR;
  if (a.has_g()) return Proto::GRAPH;
  if (a.has_sparse_tensor()) return Proto::SPARSE_TENSOR;
  if (a.has_tp()) return Proto::TYPE_PROTO;
  if (a.floats_size() > 0) return Proto::FLOATS;
  if (a.ints_size() > 0) return Proto::INTS;
  if (a.strings_size() > 0) return Proto::STRINGS;
  if (a.tensors_size() > 0) return Proto::TENSORS;
  if (a.graphs_size() > 0) return Proto::GRAPHS;
  if (a.sparse_tensors_size() > 0) return Proto::SPARSE_TENSORS;
  if (a.type_protos_size() > 0) return Proto::TYPE_PROTOS;
  return Proto::UNDEFINED;
}

absl::StatusOr<AttributeValue> AttributeFromProto(const Proto& a, std::string_view op_type,
                                                  std::string_view node_name, const TensorSource& source) {
  const std::string where = Where(op_type, node_name, a.name());
  switch (AttributeTypeOf(a)) {
    case Proto::FLOAT: return AttributeValue(a.f());
    case Proto::INT: return AttributeValue(static_cast<int64_t>(a.i()));
    case Proto::STRING: return AttributeValue(a.s());
    case Proto::TENSOR: {
      auto tensor = TensorFromProto(a.t(), where, source);
      if (!tensor.ok()) return tensor.status();
      return AttributeValue(*std::move(tensor));
    }
    case Proto::FLOATS: return AttributeValue(std::vector<float>(a.floats().begin(), a.floats().end()));
    case Proto::INTS: return AttributeValue(std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    case Proto::STRINGS: return AttributeValue(std::vector<std::string>(a.strings().begin(), a.strings().end()));
    case Proto::GRAPH:
    case Proto::GRAPHS:
      return absl::UnimplementedError(
          absl::StrCat("subgraph op ", Sv(op_type), " is not supported yet (node ", QuoteName(node_name), ")"));
    case Proto::SPARSE_TENSOR:
    case Proto::SPARSE_TENSORS:
      return absl::UnimplementedError(absl::StrCat(where, " holds a sparse tensor, which is not supported"));
    case Proto::TENSORS:
      return absl::UnimplementedError(absl::StrCat(where, " is a list of tensors, which is not supported"));
    case Proto::TYPE_PROTO:
    case Proto::TYPE_PROTOS:
      return absl::UnimplementedError(absl::StrCat(where, " holds a type, which is not supported"));
    default:
      return absl::InvalidArgumentError(absl::StrCat(where, " has no type and no value"));
  }
}

void AttributeToProto(const std::string& name, const AttributeValue& value, Proto* proto) {
  proto->Clear();
  proto->set_name(name);
  std::visit(
      [proto](const auto& v) {
        using V = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<V, int64_t>) {
          proto->set_type(Proto::INT);
          proto->set_i(v);
        } else if constexpr (std::is_same_v<V, float>) {
          proto->set_type(Proto::FLOAT);
          proto->set_f(v);
        } else if constexpr (std::is_same_v<V, std::string>) {
          proto->set_type(Proto::STRING);
          proto->set_s(v);
        } else if constexpr (std::is_same_v<V, Tensor>) {
          proto->set_type(Proto::TENSOR);
          TensorToProto(v, "", proto->mutable_t());
        } else if constexpr (std::is_same_v<V, std::vector<int64_t>>) {
          proto->set_type(Proto::INTS);
          for (int64_t x : v) proto->add_ints(x);
        } else if constexpr (std::is_same_v<V, std::vector<float>>) {
          proto->set_type(Proto::FLOATS);
          for (float x : v) proto->add_floats(x);
        } else {
          static_assert(std::is_same_v<V, std::vector<std::string>>);
          proto->set_type(Proto::STRINGS);
          for (const std::string& x : v) proto->add_strings(x);
        }
      },
      value);
}

}  // namespace attune::importer
