#include "fuzz/graph_mutator.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attune::fuzz {
namespace {

// Integers that break index arithmetic: negatives, off-by-ones, the extremes.
int64_t InterestingInt(ByteReader& r) {
  static constexpr int64_t kValues[] = {-1, 0, 1, 2, 3, 4, -2, -3, -4, 5, 7, 8, 16, 63, 64, 65, 1024,
                                        std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min(),
                                        std::numeric_limits<int32_t>::max(), -(int64_t{1} << 40)};
  const uint8_t pick = r.Byte();
  if (pick < 200) return kValues[pick % std::size(kValues)];
  return static_cast<int64_t>(r.Range(0, 65535)) - 32768;
}

// Floats that change an attention graph's meaning: scales, fills, the specials.
float InterestingFloat(ByteReader& r) {
  static constexpr float kValues[] = {0.0f, 1.0f, -1.0f, 0.5f, 0.25f, 0.125f, 2.0f, 4.0f, 8.0f, 1e-4f, -1e4f,
                                      -1e9f, 1e9f, -std::numeric_limits<float>::max(),
                                      -std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::infinity(),
                                      std::numeric_limits<float>::quiet_NaN(), -0.0f};
  const uint8_t pick = r.Byte();
  if (pick < 220) return kValues[pick % std::size(kValues)];
  return static_cast<float>(r.Range(-4000, 4000)) / 1000.0f;
}

bool MutateAttribute(Node& node, ByteReader& r) {
  Attributes& attributes = node.mutable_attributes();
  if (attributes.empty()) return false;
  auto it = attributes.all().begin();
  std::advance(it, r.Range(0, static_cast<int64_t>(attributes.all().size()) - 1));
  const std::string name = it->first;
  AttributeValue value = it->second;
  if (auto* i = std::get_if<int64_t>(&value)) {
    *i = InterestingInt(r);
  } else if (auto* f = std::get_if<float>(&value)) {
    *f = InterestingFloat(r);
  } else if (auto* ints = std::get_if<std::vector<int64_t>>(&value)) {
    const uint8_t how = r.Byte() % 4;
    if (how == 0 || ints->empty()) {
      ints->push_back(InterestingInt(r));
    } else if (how == 1) {
      ints->erase(ints->begin() + r.Range(0, static_cast<int64_t>(ints->size()) - 1));
    } else {
      (*ints)[r.Range(0, static_cast<int64_t>(ints->size()) - 1)] = InterestingInt(r);
    }
  } else if (auto* floats = std::get_if<std::vector<float>>(&value)) {
    if (floats->empty()) return false;
    (*floats)[r.Range(0, static_cast<int64_t>(floats->size()) - 1)] = InterestingFloat(r);
  } else {
    return false;
  }
  attributes.Set(name, std::move(value));
  return true;
}

// A copy of a small int64 or float tensor with one element changed; the
// original may be shared with the graph this one was cloned from.
bool MutateTensor(const Tensor& original, ByteReader& r, Tensor& out) {
  if (original.num_elements() == 0 || original.num_elements() > 64) return false;
  const int64_t at = r.Range(0, original.num_elements() - 1);
  if (original.type() == ElementType::kInt64) {
    out = original.Clone();
    out.data<int64_t>()[at] = InterestingInt(r);
    return true;
  }
  if (original.type() == ElementType::kFloat32) {
    out = original.Clone();
    out.data<float>()[at] = InterestingFloat(r);
    return true;
  }
  return false;
}

bool MutateConstant(Graph& graph, const std::vector<Value*>& constants, ByteReader& r) {
  if (constants.empty()) return false;
  Value* value = constants[r.Range(0, static_cast<int64_t>(constants.size()) - 1)];
  Tensor changed;
  if (!MutateTensor(*value->constant(), r, changed)) return false;
  graph.SetConstant(value, std::move(changed));
  return true;
}

bool MutateConstantNode(Node& node, ByteReader& r) {
  absl::StatusOr<Tensor> tensor = node.attributes().GetTensor("value");
  Tensor changed;
  if (!tensor.ok() || !MutateTensor(*tensor, r, changed)) return false;
  node.mutable_attributes().Set("value", std::move(changed));
  return true;
}

bool MutateInputShape(Graph& graph, ByteReader& r) {
  if (graph.inputs().empty()) return false;
  Value* input = graph.inputs()[r.Range(0, static_cast<int64_t>(graph.inputs().size()) - 1)];
  if (!input->shape() || input->shape()->empty()) return false;
  SymbolicShape shape = *input->shape();
  Dim& dim = shape[r.Range(0, static_cast<int64_t>(shape.size()) - 1)];
  const uint8_t how = r.Byte() % 3;
  if (how == 0) {
    dim = Dim::Known(r.Range(0, 70));
  } else if (how == 1) {
    dim = Dim::Symbol(std::string(1, static_cast<char>('a' + r.Byte() % 4)));
  } else {
    shape.erase(shape.begin() + r.Range(0, static_cast<int64_t>(shape.size()) - 1));
  }
  input->set_shape(std::move(shape));
  return true;
}

}  // namespace

void MutateGraph(Graph& graph, ByteReader& reader) {
  const std::vector<Node*> nodes = graph.nodes();
  std::vector<Value*> constants;
  for (const Node* node : nodes)
    for (Value* input : node->inputs())
      if (input != nullptr && input->is_constant() && input->constant()->num_elements() <= 64) constants.push_back(input);
  const int edits = 1 + reader.Byte() % 4;
  for (int e = 0; e < edits && !reader.empty(); ++e) {
    switch (reader.Byte() % 4) {
      case 0:
        if (!nodes.empty()) MutateAttribute(*nodes[reader.Range(0, static_cast<int64_t>(nodes.size()) - 1)], reader);
        break;
      case 1:
        MutateConstant(graph, constants, reader);
        break;
      case 2:
        if (!nodes.empty()) MutateConstantNode(*nodes[reader.Range(0, static_cast<int64_t>(nodes.size()) - 1)], reader);
        break;
      default:
        MutateInputShape(graph, reader);
        break;
    }
  }
}

}  // namespace attune::fuzz
