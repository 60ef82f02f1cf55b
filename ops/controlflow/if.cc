// If: runs then_branch or else_branch, chosen by a one-element bool cond, on
// the outer values they read; the branches may give different shapes.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/controlflow/kernels.h"
#include "ops/controlflow/subgraph_call.h"

namespace attune {
namespace {

using controlflow::SubgraphCall;

class IfKernel final : public Kernel {
 public:
  IfKernel(SubgraphCall then_branch, SubgraphCall else_branch)
      : then_(std::move(then_branch)), else_(std::move(else_branch)) {}

  absl::Status Run(KernelContext& ctx) const override {
    if (ctx.input(0) == nullptr) return absl::InvalidArgumentError("input 'cond' is omitted");
    ASSIGN_OR_RETURN(bool cond, controlflow::OneBool(*ctx.input(0), "input 'cond'"));
    ASSIGN_OR_RETURN(std::vector<Tensor> outputs, (cond ? then_ : else_).Run({}, ctx));
    for (int i = 0; i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(outputs[i]));
    return absl::OkStatus();
  }

 private:
  SubgraphCall then_;
  SubgraphCall else_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeIfKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(int own, SubgraphCall::OwnInputs(info, "then_branch"));
  if (own != 1) return absl::InvalidArgumentError(absl::StrCat("If takes 1 input (cond), the node gives ", own));
  ASSIGN_OR_RETURN(SubgraphCall then_branch, SubgraphCall::Prepare(info, "then_branch", 0, info.num_outputs));
  ASSIGN_OR_RETURN(SubgraphCall else_branch, SubgraphCall::Prepare(info, "else_branch", 0, info.num_outputs));
  return std::make_unique<IfKernel>(std::move(then_branch), std::move(else_branch));
}

}  // namespace attune
