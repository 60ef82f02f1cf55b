#include "ops/attention/attention_operands.h"

#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/attention/attention_params.h"
#include "ops/attention/float_staging.h"

namespace attune::attention {
namespace {

// Copies `bytes` bytes; for float32 data also tells whether any copied
// element is NaN or infinite (an exponent of all ones), in the same pass.
bool CopyRows(unsigned char* dst, const unsigned char* src, size_t bytes, bool float32) {
  if (!float32) {
    std::memcpy(dst, src, bytes);
    return true;
  }
  const size_t n = bytes / sizeof(uint32_t);
  uint32_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, src + i * sizeof(bits), sizeof(bits));
    std::memcpy(dst + i * sizeof(bits), &bits, sizeof(bits));
    bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

// Writes Concat(past, new) along the sequence into `present` (B, H, P+T, D),
// copying bytes so that every element type goes through unchanged. Returns
// whether every element is known finite (float32 only).
bool ConcatCache(const AttentionShapes& s, int64_t dim, const Tensor* past, const Tensor& fresh, Tensor& present) {
  const bool float32 = present.type() == ElementType::kFloat32;
  bool finite = float32;
  const size_t elem = ElementSize(present.type());
  const size_t row_bytes = static_cast<size_t>(dim) * elem;
  const int64_t heads = s.kv_heads;
  const int64_t past_len = s.past_len;
  const int64_t new_len = s.new_kv_len;
  auto* out = static_cast<unsigned char*>(present.raw_data());
  const auto* old_rows = past != nullptr ? static_cast<const unsigned char*>(past->raw_data()) : nullptr;
  const auto* new_rows = static_cast<const unsigned char*>(fresh.raw_data());
  for (int64_t b = 0; b < s.batch; ++b) {
    for (int64_t h = 0; h < heads; ++h) {
      unsigned char* dst = out + static_cast<size_t>((b * heads + h) * s.total_kv_len) * row_bytes;
      const size_t past_block = static_cast<size_t>(past_len) * row_bytes;
      if (past_block > 0) {
        finite &= CopyRows(dst, old_rows + static_cast<size_t>(b * heads + h) * past_block, past_block, float32);
        dst += past_block;
      }
      for (int64_t t = 0; t < new_len; ++t) {
        const int64_t row = s.three_d ? (b * new_len + t) * heads + h : (b * heads + h) * new_len + t;
        if (row_bytes > 0) finite &= CopyRows(dst, new_rows + static_cast<size_t>(row) * row_bytes, row_bytes, float32);
        dst += row_bytes;
      }
    }
  }
  return finite;
}

// Whether the first `rows` rows of every (batch, head) of a [B][H][capacity][dim]
// buffer are finite.
bool RowsFinite(const float* data, int64_t blocks, int64_t capacity, int64_t rows, int64_t dim) {
  uint32_t bad = 0;
  for (int64_t blk = 0; blk < blocks; ++blk) {
    const float* x = data + blk * capacity * dim;
    for (int64_t i = 0; i < rows * dim; ++i) {
      uint32_t bits;
      std::memcpy(&bits, x + i, sizeof(bits));
      bad |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
    }
  }
  return bad == 0;
}

// The appended cache: the new rows go to [past_len, total_kv_len) of the
// caller's buffer, the past rows are read where they lie (head stride
// capacity·dim), and the present output is the buffer itself. Rows outside
// the new ones are never written. Finiteness: the new rows are checked as
// they are copied; the past rows only when the caller does not know them
// finite from an earlier run.
absl::Status AppendToCache(KernelContext& ctx, const AttentionShapes& s, int64_t dim, const CacheAppend& append,
                           const Tensor& fresh, int present_output, StridedView& view, bool& finite) {
  const Tensor& buf = append.buffer;
  const std::vector<int64_t>& shape = buf.shape();
  if (buf.type() != ElementType::kFloat32 || s.type != ElementType::kFloat32 || shape.size() != 4 ||
      shape[0] != s.batch || shape[1] != s.kv_heads || shape[3] != dim || append.length != s.past_len ||
      shape[2] < s.total_kv_len)
    return absl::InvalidArgumentError(absl::StrCat(
        "cache buffer ", buf.DebugString(), " holding ", append.length, " rows cannot take a past of ", s.past_len,
        " rows plus ", s.new_kv_len, " new ones of [", s.batch, ", ", s.kv_heads, ", ", dim, "] ",
        ElementTypeName(s.type)));
  const int64_t capacity = shape[2];
  float* out = static_cast<float*>(const_cast<void*>(buf.raw_data()));
  const auto* new_rows = static_cast<const unsigned char*>(fresh.raw_data());
  const size_t row_bytes = static_cast<size_t>(dim) * sizeof(float);
  bool fresh_finite = true;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.kv_heads; ++h) {
      auto* dst = reinterpret_cast<unsigned char*>(out + ((b * s.kv_heads + h) * capacity + s.past_len) * dim);
      for (int64_t t = 0; t < s.new_kv_len; ++t) {
        const int64_t row =
            s.three_d ? (b * s.new_kv_len + t) * s.kv_heads + h : (b * s.kv_heads + h) * s.new_kv_len + t;
        if (row_bytes > 0)
          fresh_finite &= CopyRows(dst, new_rows + static_cast<size_t>(row) * row_bytes, row_bytes, true);
        dst += row_bytes;
      }
    }
  const bool past_finite = (append.rows_finite != nullptr && *append.rows_finite) ||
                           RowsFinite(out, s.batch * s.kv_heads, capacity, s.past_len, dim);
  finite = past_finite && fresh_finite;
  if (append.rows_finite != nullptr) *append.rows_finite = finite;
  view.data = out;
  view.stride_batch = s.kv_heads * capacity * dim;
  view.stride_head = capacity * dim;
  view.stride_seq = dim;
  if (present_output < ctx.num_outputs()) ctx.SetOutput(present_output, buf);
  return absl::OkStatus();
}

// The keys (or values) the computation reads, as a float view, and the
// present output when wanted.
absl::Status PrepareCache(KernelContext& ctx, const AttentionShapes& s, int64_t dim, const Tensor* past,
                          const Tensor& fresh, int present_output, std::vector<int64_t> present_shape,
                          StridedView& view, std::vector<Tensor>& buffers, bool& finite) {
  const bool want_present = present_output < ctx.num_outputs() && ctx.output_wanted(present_output);
  if (past == nullptr && !want_present) {
    ASSIGN_OR_RETURN(Tensor staged, StageAsFloat32(ctx, fresh));
    view = HeadView(staged.data<float>(), s.three_d, s.kv_heads, s.new_kv_len, dim);
    buffers.push_back(std::move(staged));
    return absl::OkStatus();
  }
  Tensor present;
  if (want_present) {
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(present_output, s.type, std::move(present_shape)));
    present = *out;
  } else {
    ASSIGN_OR_RETURN(present, ctx.AllocateScratchForOverwrite(s.type, std::move(present_shape)));
  }
  finite = ConcatCache(s, dim, past, fresh, present);
  ASSIGN_OR_RETURN(Tensor staged, StageAsFloat32(ctx, present));
  view = HeadView(staged.data<float>(), /*three_d=*/false, s.kv_heads, s.total_kv_len, dim);
  buffers.push_back(std::move(staged));
  return absl::OkStatus();
}

}  // namespace

StridedView HeadView(const float* data, bool three_d, int64_t heads, int64_t seq, int64_t dim) {
  StridedView view;
  view.data = data;
  if (three_d) {
    view.stride_batch = seq * heads * dim;
    view.stride_head = dim;
    view.stride_seq = heads * dim;
  } else {
    view.stride_batch = heads * seq * dim;
    view.stride_head = seq * dim;
    view.stride_seq = dim;
  }
  return view;
}

absl::StatusOr<AttentionOperands> PrepareAttentionOperands(KernelContext& ctx, const AttentionShapes& s,
                                                           const Tensor& q, const Tensor& k, const Tensor& v,
                                                           const Tensor* past_key, const Tensor* past_value) {
  AttentionOperands ops;
  ASSIGN_OR_RETURN(Tensor staged_q, StageAsFloat32(ctx, q));
  ops.q = HeadView(staged_q.data<float>(), s.three_d, s.q_heads, s.q_len, s.head_dim);
  ops.buffers.push_back(std::move(staged_q));
  if (const CacheAppend* append = ctx.cache_append(kInputPastKey); append != nullptr && past_key != nullptr) {
    RETURN_IF_ERROR(AppendToCache(ctx, s, s.head_dim, *append, k, kOutputPresentKey, ops.k, ops.k_finite));
  } else {
    RETURN_IF_ERROR(PrepareCache(ctx, s, s.head_dim, past_key, k, kOutputPresentKey, s.present_key_shape(), ops.k,
                                 ops.buffers, ops.k_finite));
  }
  if (const CacheAppend* append = ctx.cache_append(kInputPastValue); append != nullptr && past_value != nullptr) {
    RETURN_IF_ERROR(AppendToCache(ctx, s, s.v_head_dim, *append, v, kOutputPresentValue, ops.v, ops.v_finite));
  } else {
    RETURN_IF_ERROR(PrepareCache(ctx, s, s.v_head_dim, past_value, v, kOutputPresentValue, s.present_value_shape(),
                                 ops.v, ops.buffers, ops.v_finite));
  }
  return ops;
}

}  // namespace attune::attention
