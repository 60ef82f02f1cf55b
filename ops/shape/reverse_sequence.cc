// ReverseSequence (opset 10): for each batch entry b, the first
// sequence_lens[b] steps along time_axis are reversed; the rest are copied.
// time_axis and batch_axis are 0 and 1 in either order; elements are moved
// as bytes, so every element type works.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/common/node_label.h"
#include "ops/shape/reverse_sequence.h"

namespace attune {
namespace {

struct ReverseConfig {
  std::string label;
  int64_t time_axis = 0;
  int64_t batch_axis = 1;
};

absl::Status RunReverseSequence(KernelContext& ctx, const ReverseConfig& cfg) {
  const Tensor* x = ctx.input(0);
  const Tensor* lens = ctx.input(1);
  if (x == nullptr || lens == nullptr)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": inputs 0 and 1 are required"));
  const auto& shape = x->shape();
  if (shape.size() < 2)
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 0 has shape ", ShapeToString(shape),
                                                   "; expected rank 2 or more"));
  const int64_t steps = shape[cfg.time_axis];
  const int64_t batch = shape[cfg.batch_axis];
  if (lens->type() != ElementType::kInt64 || lens->shape() != std::vector<int64_t>{batch})
    return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 1 (sequence_lens) is ",
                                                   ElementTypeName(lens->type()), ShapeToString(lens->shape()),
                                                   "; expected int64[", batch, "]"));
  const size_t inner = x->num_elements() == 0 ? 0 : x->byte_size() / static_cast<size_t>(steps * batch);
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, x->type(), shape));
  const auto* src = static_cast<const char*>(x->raw_data());
  auto* dst = static_cast<char*>(out->raw_data());
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t len = lens->data<int64_t>()[b];
    if (len < 0 || len > steps)
      return absl::InvalidArgumentError(absl::StrCat(cfg.label, ": input 1 (sequence_lens) holds ", len,
                                                     " at batch ", b, "; expected 0..", steps));
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < len ? len - 1 - t : t;
      auto offset = [&](int64_t step) {
        return static_cast<size_t>(cfg.time_axis == 0 ? step * batch + b : b * steps + step) * inner;
      };
      std::memcpy(dst + offset(t), src + offset(from), inner);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeReverseSequenceKernel(const KernelInfo& info) {
  ReverseConfig cfg;
  cfg.label = NodeLabel(info);
  auto time_axis = info.attrs().GetInt("time_axis", 0);
  auto batch_axis = info.attrs().GetInt("batch_axis", 1);
  if (!time_axis.ok() || !batch_axis.ok() || !((*time_axis == 0 && *batch_axis == 1) ||
                                               (*time_axis == 1 && *batch_axis == 0)))
    return absl::InvalidArgumentError(
        absl::StrCat(cfg.label, ": attributes time_axis and batch_axis must be 0 and 1 in some order"));
  cfg.time_axis = *time_axis;
  cfg.batch_axis = *batch_axis;
  return MakeKernel([cfg](KernelContext& ctx) { return RunReverseSequence(ctx, cfg); });
}

}  // namespace attune
