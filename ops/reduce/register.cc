// The reduce family: reductions, softmax, arg-reductions and scans.
#include "ops/reduce/loss.h"
#include "ops/reduce/reduce_kernels.h"
#include "ops/registry.h"

namespace attune {
namespace {

void RegisterReduce(KernelRegistry& registry, const char* op, ReduceKind kind, int axes_input_since) {
  // Opsets 1-10 only lacked negative axes, which the kernel accepts anyway.
  registry.Register("", op, 1, [kind, axes_input_since](const KernelInfo& info) {
    return MakeReduceKernel(info, kind, axes_input_since);
  });
}

}  // namespace

void RegisterReduceKernels(KernelRegistry& registry) {
  RegisterReduce(registry, "ReduceSum", ReduceKind::kSum, 13);
  RegisterReduce(registry, "ReduceMean", ReduceKind::kMean, 18);
  RegisterReduce(registry, "ReduceMax", ReduceKind::kMax, 18);  // bool inputs from 20
  RegisterReduce(registry, "ReduceMin", ReduceKind::kMin, 18);  // bool inputs from 20
  RegisterReduce(registry, "ReduceProd", ReduceKind::kProd, 18);
  RegisterReduce(registry, "ReduceL1", ReduceKind::kL1, 18);
  RegisterReduce(registry, "ReduceL2", ReduceKind::kL2, 18);
  RegisterReduce(registry, "ReduceSumSquare", ReduceKind::kSumSquare, 18);
  RegisterReduce(registry, "ReduceLogSum", ReduceKind::kLogSum, 18);
  RegisterReduce(registry, "ReduceLogSumExp", ReduceKind::kLogSumExp, 18);
  // Before 13 both coerce the input to 2-D at the axis (default 1); from 13 one axis (default -1).
  registry.Register("", "Softmax", 1, [](const KernelInfo& info) { return MakeSoftmaxKernel(info, false); });
  registry.Register("", "LogSoftmax", 1, [](const KernelInfo& info) { return MakeSoftmaxKernel(info, true); });
  registry.Register("", "ArgMax", 1, [](const KernelInfo& info) { return MakeArgReduceKernel(info, true); });
  registry.Register("", "ArgMin", 1, [](const KernelInfo& info) { return MakeArgReduceKernel(info, false); });
  registry.Register("", "CumSum", 11, MakeCumSumKernel);
  registry.Register("", "NegativeLogLikelihoodLoss", 12, MakeNegativeLogLikelihoodLossKernel);
  registry.Register("", "SoftmaxCrossEntropyLoss", 12, MakeSoftmaxCrossEntropyLossKernel);
}

}  // namespace attune
