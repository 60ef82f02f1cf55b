// Loop: runs its body while the trip count M and the condition allow (both
// optional), carrying N values from one iteration to the next and stacking
// K scan outputs along a new axis 0. Bounded by the session's iteration
// limit (ExecOptions::max_loop_iterations) and, for the stacked outputs, its
// tensor limit, so that a huge M with a condition that never turns false
// fails cleanly instead of running forever or growing without bound.
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/controlflow/kernels.h"
#include "ops/controlflow/subgraph_call.h"

namespace attune {
namespace {

using controlflow::SubgraphCall;

class LoopKernel final : public Kernel {
 public:
  LoopKernel(SubgraphCall body, int carried) : body_(std::move(body)), carried_(carried) {}

  absl::Status Run(KernelContext& ctx) const override {
    const ExecOptions& options = ctx.options();
    std::optional<int64_t> trip_count;
    if (ctx.input(0) != nullptr) {
      ASSIGN_OR_RETURN(trip_count, controlflow::OneInt64(*ctx.input(0), "input 'M' (trip count)"));
    }
    bool cond = true;
    const bool has_cond = ctx.input(1) != nullptr;
    if (has_cond) {
      ASSIGN_OR_RETURN(cond, controlflow::OneBool(*ctx.input(1), "input 'cond'"));
    }
    std::vector<Tensor> carried;
    for (int i = 0; i < carried_; ++i) {
      if (ctx.input(2 + i) == nullptr)
        return absl::InvalidArgumentError(absl::StrCat("loop-carried input ", 2 + i, " is omitted"));
      carried.push_back(*ctx.input(2 + i));
    }
    const int scans = body_.num_outputs() - 1 - carried_;
    std::vector<std::vector<Tensor>> parts(scans);
    std::vector<int64_t> part_bytes(scans, 0);
    int64_t iteration = 0;
    for (; (!trip_count || iteration < *trip_count) && cond; ++iteration) {
      if (iteration >= options.max_loop_iterations)
        return absl::ResourceExhaustedError(absl::StrCat(
            "stopped after ", iteration, " iterations, the session's limit (max_loop_iterations), with ",
            trip_count ? absl::StrCat("the trip count M = ", *trip_count) : std::string("no trip count"),
            " and the condition still true"));
      std::vector<Tensor> feeds;
      feeds.push_back(Tensor::Scalar<int64_t>(iteration));
      feeds.push_back(Tensor::Scalar<bool>(cond));
      for (Tensor& t : carried) feeds.push_back(std::move(t));
      ASSIGN_OR_RETURN(std::vector<Tensor> out, body_.Run(std::move(feeds), ctx));
      if (has_cond) {  // without a cond input, the body's condition output is ignored (ONNX's "for" form)
        ASSIGN_OR_RETURN(cond, controlflow::OneBool(out[0], "the body's condition output"));
      }
      for (int i = 0; i < carried_; ++i) carried[i] = std::move(out[1 + i]);
      for (int k = 0; k < scans; ++k) {
        const std::string what = absl::StrCat("scan output ", k, " of the body");
        RETURN_IF_ERROR(controlflow::CheckScanPart(parts[k], out[1 + carried_ + k], what, part_bytes[k],
                                                  options.max_tensor_bytes));
        parts[k].push_back(std::move(out[1 + carried_ + k]));
      }
    }
    for (int i = 0; i < carried_ && i < ctx.num_outputs(); ++i) ctx.SetOutput(i, std::move(carried[i]));
    for (int k = 0; k < scans; ++k) {
      if (!ctx.output_wanted(carried_ + k)) continue;
      ASSIGN_OR_RETURN(Tensor stacked,
                       controlflow::StackAlongAxis(parts[k], 0, false, EmptyType(1 + carried_ + k), {},
                                                   options.max_tensor_bytes));
      ctx.SetOutput(carried_ + k, std::move(stacked));
    }
    return absl::OkStatus();
  }

 private:
  // A scan output of a loop that ran no iteration: [0], of the declared type.
  ElementType EmptyType(int body_output) const {
    const ElementType type = body_.output_type(body_output);
    return type == ElementType::kUndefined ? ElementType::kFloat32 : type;
  }

  SubgraphCall body_;
  int carried_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeLoopKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(int own, SubgraphCall::OwnInputs(info, "body"));
  if (own < 2)
    return absl::InvalidArgumentError(absl::StrCat("Loop takes M, cond and the loop-carried values; the node gives ",
                                                   own, " inputs"));
  const int carried = own - 2;
  if (info.num_outputs < carried)
    return absl::InvalidArgumentError(absl::StrCat("the node has ", info.num_outputs, " outputs, fewer than its ",
                                                   carried, " loop-carried values"));
  ASSIGN_OR_RETURN(SubgraphCall body, SubgraphCall::Prepare(info, "body", 2 + carried, 1 + info.num_outputs));
  return std::make_unique<LoopKernel>(std::move(body), carried);
}

}  // namespace attune
