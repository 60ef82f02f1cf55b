#include "engine/passes/passes.h"

namespace attune {
namespace {

class AttentionFusionPass final : public Pass {
 public:
  std::string_view name() const override { return "attention_fusion"; }
  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override { return false; }
};

}  // namespace

std::unique_ptr<Pass> MakeAttentionFusionPass() { return std::make_unique<AttentionFusionPass>(); }

}  // namespace attune
