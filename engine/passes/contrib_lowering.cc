// ONNX Runtime's vendor ops (com.microsoft, and SimplifiedLayerNormalization,
// which ONNX Runtime registers in the default domain) lowered onto standard
// ops and Attune's fused ops, so that the files its transformer optimizer and
// the genai model builder write run on Attune's kernels (engine/passes/contrib/).
//
// A lowering that needs a rank shape inference has not given yet (the node
// reads another vendor op's output) waits for the next round of its stage;
// a round that lowers nothing while one still waits is an error naming it.
#include <functional>
#include <map>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/contrib/lowerings.h"
#include "engine/passes/contrib_lowering.h"
#include "engine/passes/passes.h"

namespace attune {
namespace {

using contrib::Lowering;
using LowerFn = std::function<absl::Status(Lowering&, PassContext&)>;

const std::map<std::string, LowerFn>& MsLowerings() {
  static const auto* table = new std::map<std::string, LowerFn>{
      {"SkipLayerNormalization", [](Lowering& l, PassContext& c) { return contrib::LowerSkipLayerNorm(l, c, false); }},
      {"SkipSimplifiedLayerNormalization",
       [](Lowering& l, PassContext& c) { return contrib::LowerSkipLayerNorm(l, c, true); }},
      {"SimplifiedLayerNormalization", contrib::LowerSimplifiedLayerNorm},
      {"LayerNormalization", contrib::LowerLayerNorm},
      {"EmbedLayerNormalization", contrib::LowerEmbedLayerNorm},
      {"Gelu", contrib::LowerGelu},
      {"FastGelu", contrib::LowerFastGelu},
      {"BiasGelu", contrib::LowerBiasGelu},
      {"QuickGelu", contrib::LowerQuickGelu},
      {"BiasAdd", contrib::LowerBiasAdd},
      {"FusedMatMul", contrib::LowerFusedMatMul},
      {"GroupQueryAttention", contrib::LowerGroupQueryAttention},
      {"Attention", contrib::LowerMsAttention},
      {"MultiHeadAttention", contrib::LowerMsMultiHeadAttention},
  };
  return *table;
}

const LowerFn* FindLowering(const Node& node) {
  const bool ms = node.domain() == contrib::kMsDomain;
  // ONNX Runtime registers SimplifiedLayerNormalization in the default domain
  // (the genai builder writes it there); no standard op has that name.
  const bool default_vendor = node.domain().empty() && node.op_type() == "SimplifiedLayerNormalization";
  if (!ms && !default_vendor) return nullptr;
  auto it = MsLowerings().find(node.op_type());
  return it == MsLowerings().end() ? nullptr : &it->second;
}

class ContribLoweringPass final : public Pass {
 public:
  std::string_view name() const override { return "contrib_lowering"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    bool changed = false;
    absl::Status waiting = absl::OkStatus();
    for (Node* node : order) {
      const LowerFn* lower = FindLowering(*node);
      if (lower == nullptr) continue;
      Lowering lowering(graph, node);
      absl::Status status = (*lower)(lowering, context);
      if (absl::IsUnavailable(status)) {
        if (waiting.ok()) waiting = status;
        continue;
      }
      RETURN_IF_ERROR(status);
      changed = true;
    }
    if (changed) {
      graph.RemoveDeadNodes();
      if (graph.OpsetFor(contrib::kMsDomain) > 0 && !AnyMsNode(graph)) graph.RemoveOpset(contrib::kMsDomain);
    }
    if (!changed && !waiting.ok()) return absl::InvalidArgumentError(waiting.message());
    return changed;
  }

 private:
  static bool AnyMsNode(const Graph& graph) {
    for (const Node* n : graph.nodes())
      if (n->domain() == contrib::kMsDomain) return true;
    return false;
  }
};

}  // namespace

std::unique_ptr<Pass> MakeContribLoweringPass() { return std::make_unique<ContribLoweringPass>(); }

}  // namespace attune
