#include "tools/report_quantized.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/schema/quantized_matmul.h"

namespace attune::cli {

nlohmann::json QuantizedProductsToJson(const Graph& graph) {
  nlohmann::json list = nlohmann::json::array();
  for (const Node* node : graph.nodes()) {
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
  for (const auto& p : products)
    ++kinds[absl::StrFormat("%s int%d, block %d, %s, %s (accuracy_level %d)", p["format"].get<std::string>(),
                            p["bits"].get<int64_t>(), p["block_size"].get<int64_t>(),
                            p["symmetry"].get<std::string>(), p["activations"].get<std::string>(),
                            p["accuracy_level"].get<int64_t>())];
  std::string out = absl::StrCat("\nQuantized products (", products.size(), ")\n");
  if (kinds.empty()) absl::StrAppend(&out, "  none\n");
  for (const auto& [kind, n] : kinds) absl::StrAppendFormat(&out, "  %4d x %s\n", n, kind);
  return out;
}

}  // namespace attune::cli
