// TensorScatter (opset 24): present_cache = past_cache with `update` written
// along the sequence axis at each batch entry's write index (0 when
// write_indices is omitted). Linear mode needs index + sequence_length <=
// max_sequence_length; circular mode wraps the positions modulo
// max_sequence_length. Every element type: elements are copied as bytes.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/scatter/kernels.h"

namespace attune::scatter {
namespace {

class TensorScatterKernel final : public Kernel {
 public:
  TensorScatterKernel(std::string label, int64_t axis, bool circular)
      : label_(std::move(label)), axis_(axis), circular_(circular) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* past = ctx.input(0);
    const Tensor* update = ctx.input(1);
    if (past == nullptr || update == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs past_cache and update"));
    const std::vector<int64_t>& ps = past->shape();
    const std::vector<int64_t>& us = update->shape();
    const int64_t rank = static_cast<int64_t>(ps.size());
    if (axis_ < -rank || axis_ >= rank || (axis_ + rank) % rank == 0)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": axis ", axis_, " is out of range or the batch axis for ",
                                                     "past_cache ", ShapeToString(ps)));
    const int64_t axis = (axis_ + rank) % rank;
    bool match = us.size() == ps.size() && update->type() == past->type();
    for (int64_t i = 0; match && i < rank; ++i) match = i == axis ? us[i] <= ps[i] : us[i] == ps[i];
    if (!match)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": update ", ShapeToString(us), " must have past_cache's ",
                                                     "type and shape ", ShapeToString(ps), " but for a sequence axis ",
                                                     axis, " no longer than past_cache's"));
    const int64_t batch = ps[0], max_seq = ps[axis], seq = us[axis];
    std::vector<int64_t> index(batch, 0);
    if (const Tensor* w = ctx.input(2); w != nullptr) {
      if (w->type() != ElementType::kInt64 || w->shape() != std::vector<int64_t>{batch})
        return absl::InvalidArgumentError(absl::StrCat(label_, ": write_indices must be int64 [", batch, "]"));
      for (int64_t b = 0; b < batch; ++b) {
        index[b] = w->data<int64_t>()[b];
        if (index[b] < 0 || (!circular_ && index[b] > max_seq - seq))
          return absl::InvalidArgumentError(absl::StrCat(label_, ": write_indices[", b, "] is ", index[b], "; with ",
                                                         seq, " new positions it must be ",
                                                         circular_ ? ">= 0" : absl::StrCat("in [0, ", max_seq - seq, "]")));
      }
    }
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, past->type(), ps));
    std::memcpy(out->raw_data(), past->raw_data(), past->byte_size());
    if (seq == 0 || past->num_elements() == 0) return absl::OkStatus();
    int64_t inner = ElementSize(past->type());  // bytes of one position
    for (int64_t i = axis + 1; i < rank; ++i) inner *= ps[i];
    const int64_t outer = past->num_elements() / (max_seq * (inner / ElementSize(past->type()))), per_batch = outer / batch;
    const auto* src = static_cast<const uint8_t*>(update->raw_data());
    auto* dst = static_cast<uint8_t*>(out->raw_data());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t s = 0; s < seq; ++s) {
        const int64_t pos = (index[o / per_batch] % max_seq + s) % max_seq;
        std::memcpy(dst + (o * max_seq + pos) * inner, src + (o * seq + s) * inner, static_cast<size_t>(inner));
      }
    return absl::OkStatus();
  }

 private:
  std::string label_;
  int64_t axis_;
  bool circular_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeTensorScatterKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || !info.input_present[0] || !info.input_present[1])
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs past_cache and update"));
  ASSIGN_OR_RETURN(int64_t axis, info.attrs().GetInt("axis", -2));
  ASSIGN_OR_RETURN(std::string mode, info.attrs().GetString("mode", "linear"));
  if (mode != "linear" && mode != "circular")
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'mode' has the unknown value ", QuoteName(mode),
                                                   "; expected linear or circular"));
  return std::make_unique<TensorScatterKernel>(std::move(label), axis, mode == "circular");
}

}  // namespace attune::scatter
