// The rotary embedding kernel. Contracts: ONNX's RotaryEmbedding-23
// (onnx/defs/nn/defs.cc) and ONNX Runtime's contrib op
// (contrib_ops/cpu/bert/rotary_embedding.cc): with the halves form,
// y[i] = x[i]·cos[i] − x[i+h]·sin[i] and y[i+h] = x[i+h]·cos[i] + x[i]·sin[i]
// for i < h = rotary_dim/2; with the interleaved form the pair is (2i, 2i+1).
// The contrib op's position_ids may be one offset ([1]: position = offset + s);
// its `scale` only rescales a cache it would grow, which the CPU op never does.
#include "ops/contrib/rotary_embedding.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/parallel.h"

namespace attune {

void ApplyRotary(const RotaryLayout& l, const float* x, const float* cos, const float* sin, const int64_t* positions,
                 bool position_offset, bool per_token_cache, float* y, int threads) {
  const int64_t half = l.rotary_dim / 2;
  const int64_t rows = l.batch * l.seq * l.heads;
  ParallelForRange(rows, std::max<int64_t>(1, kCostlyOpGrain / std::max<int64_t>(l.head_size, 1)), threads,
                   [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t b, s, h;
      if (l.heads_first) {
        b = r / (l.heads * l.seq), h = (r / l.seq) % l.heads, s = r % l.seq;
      } else {
        b = r / (l.seq * l.heads), s = (r / l.heads) % l.seq, h = r % l.heads;
      }
      (void)h;
      const int64_t offset = r * l.head_size;  // rows are contiguous in either layout
      const float* xr = x + offset;
      float* yr = y + offset;
      const int64_t cache_row = per_token_cache ? b * l.seq + s
                                : position_offset ? positions[0] + s
                                                  : positions[b * l.seq + s];
      const float* c = cos + cache_row * half;
      const float* sn = sin + cache_row * half;
      if (l.interleaved) {
        for (int64_t i = 0; i < half; ++i) {
          const float x0 = xr[2 * i], x1 = xr[2 * i + 1];
          yr[2 * i] = x0 * c[i] - x1 * sn[i];
          yr[2 * i + 1] = x1 * c[i] + x0 * sn[i];
        }
      } else {
        for (int64_t i = 0; i < half; ++i) {
          const float x0 = xr[i], x1 = xr[i + half];
          yr[i] = x0 * c[i] - x1 * sn[i];
          yr[i + half] = x1 * c[i] + x0 * sn[i];
        }
      }
      if (l.head_size > l.rotary_dim)
        std::memcpy(yr + l.rotary_dim, xr + l.rotary_dim, sizeof(float) * (l.head_size - l.rotary_dim));
    }
  });
}

namespace {

struct RotaryAttributes {
  int64_t num_heads = 0;
  int64_t rotary_dim = 0;
  bool interleaved = false;
};

class RotaryKernel final : public Kernel {
 public:
  RotaryKernel(std::string label, RotaryAttributes attrs, bool ms_order)
      : label_(std::move(label)), attrs_(attrs), ms_(ms_order) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* pos = ctx.input(ms_ ? 1 : 3);
    const Tensor* cos = ctx.input(ms_ ? 2 : 1);
    const Tensor* sin = ctx.input(ms_ ? 3 : 2);
    if (x == nullptr || cos == nullptr || sin == nullptr || (ms_ && pos == nullptr))
      return Bad("needs inputs ", ms_ ? "input, position_ids, cos_cache and sin_cache" : "X, cos_cache and sin_cache");
    for (const Tensor* t : {x, cos, sin})
      if (t->type() != ElementType::kFloat32)
        return absl::UnimplementedError(absl::StrCat(label_, ": element type ", ElementTypeName(t->type()),
                                                     " is not supported (float32 only)"));
    ASSIGN_OR_RETURN(RotaryLayout l, Layout(*x, *cos));
    const int64_t half = l.rotary_dim / 2;
    if (cos->shape() != sin->shape()) return Bad("cos_cache ", ShapeToString(cos->shape()), " and sin_cache ",
                                                 ShapeToString(sin->shape()), " differ");
    bool per_token = false, offset = false;
    if (pos == nullptr) {
      per_token = true;
      if (cos->shape() != std::vector<int64_t>{l.batch, l.seq, half})
        return Bad("without position_ids, cos_cache must be [batch, sequence, rotary_dim/2] = [", l.batch, ", ", l.seq,
                   ", ", half, "], got ", ShapeToString(cos->shape()));
    } else {
      if (pos->type() != ElementType::kInt64) return Bad("position_ids must be int64");
      if (cos->rank() != 2 || cos->shape()[1] != half)
        return Bad("cos_cache must be [max_position, rotary_dim/2 = ", half, "], got ", ShapeToString(cos->shape()));
      offset = ms_ && pos->num_elements() == 1 && pos->rank() == 1;
      if (!offset && pos->shape() != std::vector<int64_t>{l.batch, l.seq})
        return Bad("position_ids must be [batch, sequence] = [", l.batch, ", ", l.seq, "]",
                   ms_ ? " or [1]" : "", ", got ", ShapeToString(pos->shape()));
      const int64_t rows = cos->shape()[0];
      const int64_t* p = pos->data<int64_t>();
      for (int64_t i = 0; i < pos->num_elements(); ++i) {
        const int64_t last = offset ? p[0] + l.seq - 1 : p[i];
        if (p[i] < 0 || last >= rows)
          return Bad("position ", offset ? last : p[i], " (position_ids) is outside cos_cache's ", rows, " rows");
      }
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kFloat32, x->shape()));
    ApplyRotary(l, x->data<float>(), cos->data<float>(), sin->data<float>(),
                pos != nullptr ? pos->data<int64_t>() : nullptr, offset, per_token, y->data<float>(), ctx.threads());
    return absl::OkStatus();
  }

 private:
  template <typename... Args>
  absl::Status Bad(const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(label_, ": ", args...));
  }

  absl::StatusOr<RotaryLayout> Layout(const Tensor& x, const Tensor& cos) const {
    RotaryLayout l;
    l.interleaved = attrs_.interleaved;
    if (x.rank() == 4) {
      l.heads_first = true;
      l.batch = x.shape()[0], l.heads = x.shape()[1], l.seq = x.shape()[2], l.head_size = x.shape()[3];
    } else if (x.rank() == 3) {
      l.batch = x.shape()[0], l.seq = x.shape()[1];
      const int64_t hidden = x.shape()[2];
      int64_t heads = attrs_.num_heads;
      // The contrib op without num_heads takes the head size from the cache.
      if (heads == 0 && ms_ && cos.rank() >= 1 && cos.shape().back() > 0 && hidden % (2 * cos.shape().back()) == 0)
        heads = hidden / (2 * cos.shape().back());
      if (heads <= 0) return Bad("a 3-D input needs the num_heads attribute");
      if (hidden % heads != 0) return Bad("hidden size ", hidden, " is not a multiple of num_heads ", heads);
      l.heads = heads, l.head_size = hidden / heads;
    } else {
      return Bad("input must be 3-D [batch, sequence, hidden] or 4-D [batch, heads, sequence, head], got ",
                 ShapeToString(x.shape()));
    }
    l.rotary_dim = attrs_.rotary_dim > 0 ? attrs_.rotary_dim : l.head_size;
    if (l.rotary_dim > l.head_size || l.rotary_dim % 2 != 0)
      return Bad("rotary_embedding_dim ", l.rotary_dim, " must be even and at most the head size ", l.head_size);
    return l;
  }

  std::string label_;
  RotaryAttributes attrs_;
  bool ms_;
};

absl::StatusOr<std::unique_ptr<Kernel>> MakeRotary(const KernelInfo& info, bool ms) {
  const std::string label = NodeLabel(info);
  RotaryAttributes a;
  const auto& attrs = info.attrs();
  for (const auto& [name, value] : attrs.all())
    if (name != "num_heads" && name != "rotary_embedding_dim" && name != "interleaved" &&
        !(ms && (name == "scale" || name == "is_packed_batching")))
      return absl::UnimplementedError(absl::StrCat(label, ": unsupported attribute ", name));
  ASSIGN_OR_RETURN(a.num_heads, attrs.GetInt("num_heads", 0));
  ASSIGN_OR_RETURN(a.rotary_dim, attrs.GetInt("rotary_embedding_dim", 0));
  ASSIGN_OR_RETURN(int64_t interleaved, attrs.GetInt("interleaved", 0));
  ASSIGN_OR_RETURN(int64_t packed, attrs.GetInt("is_packed_batching", 0));
  if (packed != 0) return absl::UnimplementedError(absl::StrCat(label, ": is_packed_batching = 1 is not supported"));
  if (interleaved != 0 && interleaved != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": interleaved must be 0 or 1, got ", interleaved));
  if (a.num_heads < 0 || a.rotary_dim < 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": num_heads and rotary_embedding_dim must be >= 0"));
  if (ms && a.rotary_dim > 0 && a.num_heads == 0)
    return absl::InvalidArgumentError(absl::StrCat(label, ": num_heads must be given with rotary_embedding_dim"));
  a.interleaved = interleaved == 1;
  if (info.num_inputs() < (ms ? 4 : 3) || info.num_inputs() > 4 || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs ", ms ? "4" : "3 or 4", " inputs and 1 output"));
  return std::make_unique<RotaryKernel>(label, a, ms);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeOnnxRotaryEmbeddingKernel(const KernelInfo& info) {
  return MakeRotary(info, false);
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeMsRotaryEmbeddingKernel(const KernelInfo& info) {
  return MakeRotary(info, true);
}

}  // namespace attune
