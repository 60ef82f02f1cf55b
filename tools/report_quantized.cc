#include "tools/report_quantized.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/schema/half_weight_matmul.h"
#include "core/schema/quantized_matmul.h"

namespace attune::cli {

namespace {

// A 16-bit weight product: the same keys, bits 16 and no blocks or zero points.
nlohmann::json HalfProductToJson(const Node& node) {
  const Value* w = node.input(halfw::kInputW);
  const bool bf16 = w != nullptr && w->type() == ElementType::kBFloat16;
  const int64_t level = node.attributes().GetInt(halfw::kAccuracyLevel, halfw::kFloat32Activations).value_or(1);
  const bool rounds_a = bf16 && level >= 2;
  const std::vector<int64_t> shape =
      w != nullptr && w->shape().has_value() && IsStatic(*w->shape()) ? StaticDims(*w->shape()) : std::vector<int64_t>{};
  return {{"node", node.name()},
          {"format", absl::StrCat(halfw::kDomain, ".", halfw::kOpType, bf16 ? " bfloat16" : " float16")},
          {"bits", 16},
          {"block_size", 0},
          {"symmetry", "none"},
          {"accuracy_level", level},
          {"activations", rounds_a ? "bfloat16 activations" : "float32 activations"},
          {"k", shape.size() == 2 ? shape[1] : -1},
          {"n", shape.size() == 2 ? shape[0] : -1}};
}

}  // namespace

nlohmann::json QuantizedProductsToJson(const Graph& graph) {
  nlohmann::json list = nlohmann::json::array();
  for (const Node* node : graph.nodes()) {
    if (node->domain() == halfw::kDomain && node->op_type() == halfw::kOpType) {
      list.push_back(HalfProductToJson(*node));
      continue;
    }
    if (node->domain() != qmatmul::kDomain || node->op_type() != qmatmul::kOpType) continue;
    auto params = qmatmul::ReadQuantizedMatMulParams(node->attributes(), node->Describe());
    if (!params.ok()) continue;  // the session refused such a node already
    const Value* zp = node->input(qmatmul::kInputZeroPoints);
    list.push_back({{"node", node->name()},
                    {"format", qmatmul::kFormatName},
                    {"bits", params->bits},
                    {"block_size", params->block_size},
                    {"symmetry", qmatmul::SymmetryName(zp != nullptr, zp != nullptr ? zp->type() : ElementType::kUndefined)},
                    {"accuracy_level", params->accuracy_level},
                    {"activations", qmatmul::ActivationModeName(params->activation_mode())},
                    {"k", params->k},
                    {"n", params->n}});
  }
  return list;
}

std::string QuantizedProductsText(const nlohmann::json& products) {
  std::map<std::string, int> kinds;
  for (const auto& p : products) {
    if (p["bits"].get<int64_t>() == 16) {
      ++kinds[absl::StrFormat("%s weights, %s (accuracy_level %d)", p["format"].get<std::string>(),
                              p["activations"].get<std::string>(), p["accuracy_level"].get<int64_t>())];
      continue;
    }
    ++kinds[absl::StrFormat("%s int%d, block %d, %s, %s (accuracy_level %d)", p["format"].get<std::string>(),
                            p["bits"].get<int64_t>(), p["block_size"].get<int64_t>(),
                            p["symmetry"].get<std::string>(), p["activations"].get<std::string>(),
                            p["accuracy_level"].get<int64_t>())];
  }
  std::string out = absl::StrCat("\nQuantized products (", products.size(), ")\n");
  if (kinds.empty()) absl::StrAppend(&out, "  none\n");
  for (const auto& [kind, n] : kinds) absl::StrAppendFormat(&out, "  %4d x %s\n", n, kind);
  return out;
}

}  // namespace attune::cli
