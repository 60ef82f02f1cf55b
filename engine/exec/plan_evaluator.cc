#include "engine/exec/plan_evaluator.h"

#include "core/common/status_macros.h"
#include "engine/exec/plan.h"

namespace attune {
namespace {

class PreparedPlan final : public PreparedSubgraph {
 public:
  explicit PreparedPlan(std::unique_ptr<Plan> plan) : plan_(std::move(plan)) {}
  absl::StatusOr<std::vector<Tensor>> Evaluate(std::vector<Tensor> inputs) const override {
    return plan_->Run(std::move(inputs));
  }

 private:
  std::unique_ptr<Plan> plan_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<PreparedSubgraph>> PlanEvaluator::Prepare(const Graph& graph,
                                                                          const ExecOptions& options) const {
  ASSIGN_OR_RETURN(std::unique_ptr<Plan> plan, Plan::Compile(graph, *registry_, options));
  return std::make_unique<PreparedPlan>(std::move(plan));
}

const SubgraphEvaluator& DefaultSubgraphEvaluator() {
  static const PlanEvaluator* evaluator = new PlanEvaluator(DefaultKernelRegistry());
  return *evaluator;
}

}  // namespace attune
