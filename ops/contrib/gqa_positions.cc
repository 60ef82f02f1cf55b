// GroupQueryAttention's contract (contrib_ops/cpu/bert/gqa_attention_base.h):
// sequence b holds seqlens_k[b] + 1 keys; its S new tokens sit at positions
// past_b .. past_b + S - 1 with past_b = seqlens_k[b] + 1 - S, or 0 on the
// first prompt (no past: a right-padded batch's short rows still start at 0).
// The lowering appends the new keys after the P past rows of every sequence
// alike (attune.MultiHeadAttention's cache), which is that contract when no
// past is given, or when every sequence holds exactly P + S keys. A batch
// whose sequences differ in length after the prompt (a shared max-length
// buffer, or a right-padded batch decoding) is refused with its numbers,
// never computed differently.
#include "ops/contrib/gqa_positions.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"

namespace attune {
namespace {

class GroupQueryPositionsKernel final : public Kernel {
 public:
  explicit GroupQueryPositionsKernel(std::string label) : label_(std::move(label)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* query = ctx.input(0);
    const Tensor* seqlens = ctx.input(1);
    const Tensor* total = ctx.input(2);
    const Tensor* past_shape = ctx.input(3);
    if (query == nullptr || seqlens == nullptr || total == nullptr)
      return Bad("needs query, seqlens_k and total_sequence_length");
    if (query->rank() != 3) return Bad("query must be 3-D [batch, sequence, hidden], got ", ShapeToString(query->shape()));
    const int64_t batch = query->shape()[0], seq = query->shape()[1];
    if (seqlens->type() != ElementType::kInt32 || seqlens->shape() != std::vector<int64_t>{batch})
      return Bad("seqlens_k must be int32 [batch = ", batch, "], got ", ElementTypeName(seqlens->type()), " ",
                 ShapeToString(seqlens->shape()));
    if (total->type() != ElementType::kInt32 || total->num_elements() != 1)
      return Bad("total_sequence_length must be one int32");
    const int64_t total_len = total->data<int32_t>()[0];
    if (past_shape != nullptr && (past_shape->type() != ElementType::kInt64 || past_shape->num_elements() != 4))
      return Bad("past_key must be 4-D [batch, kv_heads, past, head]");
    const int64_t past_len = past_shape != nullptr ? past_shape->data<int64_t>()[2] : 0;
    const bool first_prompt = past_len == 0;
    if (first_prompt && total_len != seq)
      return Bad("total_sequence_length ", total_len, " must equal the sequence length ", seq, " without a past");
    if (!first_prompt && total_len != past_len + seq)
      return Bad("total_sequence_length ", total_len, " is not past_key's ", past_len, " rows + ", seq,
                 " new: a shared max-length cache buffer is not supported; give past and present as growing tensors");
    const int32_t* lens = seqlens->data<int32_t>();
    for (int64_t b = 0; b < batch; ++b) {
      if (lens[b] < 0 || lens[b] >= total_len)
        return Bad("seqlens_k[", b, "] = ", lens[b], " is beyond the ", total_len, " keys of the buffer");
      if (!first_prompt && lens[b] + 1 != total_len)
        return Bad("seqlens_k[", b, "] = ", lens[b], " but every sequence holds ", total_len,
                   " keys after the prompt: a batch of different lengths needs a past of its own per sequence");
    }
    ctx.SetOutput(0, *query);
    ASSIGN_OR_RETURN(Tensor * positions, ctx.AllocateOutputForOverwrite(1, ElementType::kInt64, {batch, seq}));
    int64_t* p = positions->data<int64_t>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t s = 0; s < seq; ++s) p[b * seq + s] = past_len + s;
    return absl::OkStatus();
  }

 private:
  template <typename... Args>
  absl::Status Bad(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(label_, ": ", args...));
  }
  std::string label_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeGroupQueryPositionsKernel(const KernelInfo& info) {
  if (info.num_inputs() < 3 || info.num_inputs() > 4 || info.num_outputs != 2)
    return absl::InvalidArgumentError(absl::StrCat(NodeLabel(info), ": needs 3 or 4 inputs and 2 outputs"));
  return std::make_unique<GroupQueryPositionsKernel>(NodeLabel(info));
}

}  // namespace attune
