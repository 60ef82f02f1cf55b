#include "tools/dot_folding.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <set>

#include "absl/strings/str_cat.h"

namespace attune::cli {
namespace {

bool IsIntegerOrBool(ElementType t) {
  switch (t) {
    case ElementType::kInt64:
    case ElementType::kInt32:
    case ElementType::kInt16:
    case ElementType::kInt8:
    case ElementType::kUint64:
    case ElementType::kUint32:
    case ElementType::kUint16:
    case ElementType::kUint8:
    case ElementType::kBool:
    case ElementType::kUndefined:  // unknown: let the uses decide
      return true;
    default:
      return false;
  }
}

// Ops cheap enough to count as shape arithmetic when all they feed is shapes.
bool IsShapeArithmetic(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Shape", "Size",    "Gather",  "Unsqueeze", "Squeeze",    "Concat",     "ConstantOfShape", "Cast",
      "Slice", "Add",     "Sub",     "Mul",       "Div",        "Equal",      "Where",           "Range",
      "Reshape", "Expand", "Identity", "Min",     "Max",        "Neg",        "Abs",             "ReduceProd",
      "ReduceMin", "ReduceMax", "ReduceSum", "Floor", "Ceil",   "Less",       "Greater",         "LessOrEqual",
      "GreaterOrEqual", "Not", "And", "Or",       "Mod",        "Tile",       "Constant"};
  return kOps.contains(op);
}

// The layer a node belongs to: the first "<sep><digits>/" in its name with
// <sep> one of . _ / gives prefix (up to the digits), index and the rest.
struct LayerKey {
  std::string prefix;
  int64_t index;
  std::string local;
};

std::optional<LayerKey> LayerKeyOf(const std::string& name) {
  for (size_t p = 1; p < name.size(); ++p) {
    if (!std::isdigit(static_cast<unsigned char>(name[p])) || std::isdigit(static_cast<unsigned char>(name[p - 1])))
      continue;
    size_t q = p;
    while (q < name.size() && std::isdigit(static_cast<unsigned char>(name[q]))) ++q;
    const char before = name[p - 1];
    if ((before == '.' || before == '_' || before == '/') && q < name.size() && name[q] == '/' && q - p <= 9)
      return LayerKey{name.substr(0, p), std::stoll(name.substr(p, q - p)), name.substr(q)};
    p = q;
  }
  return std::nullopt;
}

std::string Signature(const Node& node, const std::string& local) {
  std::string attrs = node.attributes().ToString();
  if (attrs.size() > 200) attrs.resize(200);
  return absl::StrCat(local, "|", node.domain(), ".", node.op_type(), "|", attrs);
}

}  // namespace

bool IsShapeInput(const Node& node, int index) {
  const std::string& op = node.op_type();
  if (!node.domain().empty()) return false;
  if (op == "Reshape" || op == "Expand" || op == "Tile" || op == "Unsqueeze" || op == "Squeeze" || op == "TopK" ||
      op == "OneHot" || op == "Split" || op == "Trilu" || op == "CumSum" || op == "Upsample" ||
      op.rfind("Reduce", 0) == 0)
    return index == 1;
  if (op == "ConstantOfShape") return index == 0;
  if (op == "Slice") return index >= 1 && index <= 4;
  if (op == "Range") return index <= 2;
  if (op == "Resize") return index >= 1 && index <= 3;
  if (op == "Pad") return index == 1 || index == 3;
  return false;
}

absl::flat_hash_set<const Node*> ShapeOnlyNodes(const Graph& graph) {
  absl::flat_hash_set<const Node*> shape_only;
  for (const Node* node : graph.nodes()) {
    if (!node->domain().empty() || !IsShapeArithmetic(node->op_type())) continue;
    bool ok = true;
    for (const Value* out : node->outputs()) {
      if (out == nullptr) continue;
      const bool reads_shape_only = node->op_type() == "Shape" || node->op_type() == "Size";
      if (out->is_graph_output() || (!reads_shape_only && !IsIntegerOrBool(out->type()))) ok = false;
    }
    if (ok) shape_only.insert(node);
  }
  // Drop candidates with a use that is data, until nothing changes.
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = shape_only.begin(); it != shape_only.end();) {
      const Node* node = *it;
      bool ok = true;
      for (const Value* out : node->outputs()) {
        if (out == nullptr) continue;
        for (const Use& use : out->uses())
          if (!shape_only.contains(use.node) && !IsShapeInput(*use.node, use.index)) ok = false;
      }
      if (ok) {
        ++it;
      } else {
        shape_only.erase(it++);
        changed = true;
      }
    }
  }
  return shape_only;
}

LayerFolding FoldRepeatedLayers(const std::vector<Node*>& nodes, const absl::flat_hash_set<const Node*>& hidden) {
  struct Layer {
    std::vector<const Node*> nodes;
    std::vector<std::string> signature;
  };
  std::map<std::string, std::map<int64_t, Layer>> by_prefix;
  for (const Node* node : nodes) {
    if (hidden.contains(node)) continue;
    auto key = LayerKeyOf(node->name());
    if (!key) continue;
    Layer& layer = by_prefix[key->prefix][key->index];
    layer.nodes.push_back(node);
    layer.signature.push_back(Signature(*node, key->local));
  }
  LayerFolding folding;
  for (auto& [prefix, layers] : by_prefix) {
    if (layers.size() < 2) continue;
    for (auto& [index, layer] : layers) std::sort(layer.signature.begin(), layer.signature.end());
    const auto& [first_index, first] = *layers.begin();
    // A lone node per "layer" (MatMul_1, MatMul_2 ...) is not a layer.
    if (first.nodes.size() < 2) continue;
    LayerGroup group;
    group.prefix = prefix;
    group.shown_index = first_index;
    group.nodes_per_layer = static_cast<int>(first.nodes.size());
    for (const Node* n : first.nodes) ++group.ops_per_layer[n->op_type()];
    std::vector<const Node*> folded;
    for (const auto& [index, layer] : layers) {
      if (index == first_index || layer.signature != first.signature) continue;
      group.folded_indices.push_back(index);
      folded.insert(folded.end(), layer.nodes.begin(), layer.nodes.end());
    }
    if (group.folded_indices.empty()) continue;
    const int id = static_cast<int>(folding.groups.size());
    for (const Node* n : folded) folding.group_of[n] = id;
    folding.groups.push_back(std::move(group));
  }
  return folding;
}

}  // namespace attune::cli
