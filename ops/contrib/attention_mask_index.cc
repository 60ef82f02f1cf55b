// ONNX Runtime's mask conventions (contrib_ops/cpu/bert/attention_cpu_base.h,
// attention_helper.h PrepareMask): an end position hides the keys at and after
// it, a start position the keys before it (clamped to the T keys); a raw mask
// shows a key where its entry is > 0. What hides a key is then the fused op's
// business (its key padding, or this additive mask).
#include "ops/contrib/attention_mask_index.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"

namespace attune {
namespace {

struct MaskDims {
  int64_t batch = 0, queries = 0, past = 0, keys = 0;  // keys = T = past + new keys
};

class AttentionMaskIndexKernel final : public Kernel {
 public:
  AttentionMaskIndexKernel(std::string label, bool additive, float fill)
      : label_(std::move(label)), additive_(additive), fill_(fill) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* mask = ctx.input(0);
    if (mask == nullptr || ctx.input(1) == nullptr) return Bad("needs the mask and the query");
    if (mask->type() != ElementType::kInt32)
      return Bad("the mask must be int32, got ", ElementTypeName(mask->type()));
    ASSIGN_OR_RETURN(const MaskDims d, Dims(ctx));
    return additive_ ? Additive(ctx, *mask, d) : KeyPadding(ctx, *mask, d);
  }

 private:
  absl::StatusOr<MaskDims> Dims(const KernelContext& ctx) const {
    const Tensor& q = *ctx.input(1);
    if (q.rank() < 2) return Bad("query must have a batch and a sequence dim, got ", ShapeToString(q.shape()));
    MaskDims d;
    d.batch = q.shape()[0], d.queries = q.shape()[1];
    int64_t fresh = d.queries;
    if (const Tensor* k = ctx.input(2)) {
      if (k->rank() < 3) return Bad("key must be 3-D or more, got ", ShapeToString(k->shape()));
      fresh = k->rank() == 4 ? k->shape()[2] : k->shape()[1];
    }
    if (const Tensor* past = ctx.input(3)) {
      if (past->type() != ElementType::kInt64 || past->num_elements() != 4)
        return Bad("past_key must be 4-D [batch, heads, past, head]");
      d.past = past->data<int64_t>()[2];
    }
    d.keys = d.past + fresh;
    return d;
  }

  // bool [B, T]: key padding rows.
  absl::Status KeyPadding(KernelContext& ctx, const Tensor& mask, const MaskDims& d) const {
    const std::vector<int64_t>& s = mask.shape();
    const bool ends = s.size() == 1 && s[0] == d.batch;
    const bool ends_starts = s.size() == 1 && s[0] == 2 * d.batch;
    const bool raw = s.size() == 2 && s[0] == d.batch && s[1] == d.keys;
    if (!ends && !ends_starts && !raw)
      return Bad("mask of shape ", ShapeToString(s), " is not [batch] (ends), [2 * batch] (ends, starts) or ",
                 "[batch, total keys = ", d.keys, "] with batch ", d.batch);
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, ElementType::kBool, {d.batch, d.keys}));
    bool* visible = out->data<bool>();
    const int32_t* m = mask.data<int32_t>();
    for (int64_t b = 0; b < d.batch; ++b) {
      bool* row = visible + b * d.keys;
      if (raw) {
        for (int64_t t = 0; t < d.keys; ++t) row[t] = m[b * d.keys + t] > 0;
        continue;
      }
      const int64_t end = std::clamp<int64_t>(m[b], 0, d.keys);
      const int64_t start = ends_starts ? std::clamp<int64_t>(m[d.batch + b], 0, d.keys) : 0;
      for (int64_t t = 0; t < d.keys; ++t) row[t] = t >= start && t < end;
    }
    return absl::OkStatus();
  }

  // float [B, 1, S, T]: 0 where visible, fill where hidden.
  absl::Status Additive(KernelContext& ctx, const Tensor& mask, const MaskDims& d) const {
    const std::vector<int64_t>& s = mask.shape();
    const bool per_row = s.size() == 3 && s[0] == d.batch && s[1] == d.queries && s[2] == d.keys;
    // Megatron's [B, 1, max, max]: the rows of the new queries.
    const bool square = s.size() == 4 && s[0] == d.batch && s[1] == 1 && s[2] == s[3] &&
                        s[2] >= d.past + d.queries && s[3] >= d.keys;
    if (!per_row && !square)
      return Bad("mask of shape ", ShapeToString(s), " is not [batch, sequence, total keys] = [", d.batch, ", ",
                 d.queries, ", ", d.keys, "] or [batch, 1, max, max] with max >= ", std::max(d.keys, d.past + d.queries));
    ASSIGN_OR_RETURN(Tensor * out,
                     ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, {d.batch, 1, d.queries, d.keys}));
    float* o = out->data<float>();
    const int32_t* m = mask.data<int32_t>();
    for (int64_t b = 0; b < d.batch; ++b)
      for (int64_t q = 0; q < d.queries; ++q) {
        const int32_t* row = per_row ? m + (b * d.queries + q) * d.keys : m + (b * s[2] + d.past + q) * s[3];
        float* dst = o + (b * d.queries + q) * d.keys;
        for (int64_t t = 0; t < d.keys; ++t) dst[t] = row[t] > 0 ? 0.0f : fill_;
      }
    return absl::OkStatus();
  }

  template <typename... Args>
  absl::Status Bad(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(label_, ": ", args...));
  }

  std::string label_;
  bool additive_;
  float fill_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeAttentionMaskIndexKernel(const KernelInfo& info) {
  const std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || info.num_inputs() > 4 || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs 2 to 4 inputs and 1 output"));
  for (const auto& [name, value] : info.attrs().all())
    if (name != "additive" && name != "fill")
      return absl::UnimplementedError(absl::StrCat(label, ": unsupported attribute ", name));
  ASSIGN_OR_RETURN(const int64_t additive, info.attrs().GetInt("additive", 0));
  ASSIGN_OR_RETURN(const float fill, info.attrs().GetFloat("fill", -10000.0f));
  if (additive != 0 && additive != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": additive must be 0 or 1, got ", additive));
  return std::make_unique<AttentionMaskIndexKernel>(label, additive == 1, fill);
}

}  // namespace attune
