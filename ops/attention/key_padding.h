// Turns MultiHeadAttention's key padding input ([batch, total_kv_len], 0
// where a key is padding) into what the kernels read: a -inf bias row per
// batch, the count of keys up to the last visible one (so trailing padding
// is skipped by blocks), and the visibility bytes a fully hidden row needs.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "ops/attention/attention_params.h"
#include "ops/attention/attention_shapes.h"
#include "ops/attention/kernels/attention_args.h"
#include "ops/kernel.h"

namespace attune::attention {

struct KeyPadding {
  StridedView bias;                 // [batch][*][*][total_kv_len]: 0 or -inf, heads and rows broadcast
  std::vector<int64_t> valid_keys;  // per batch: last visible key + 1
  std::vector<uint8_t> visible;     // [batch][total_kv_len]
  bool every_key_visible = true;    // no key is padding: the mask changes nothing
  Tensor storage;                   // the bias rows
};

/// InvalidArgument naming the input when the mask is not [batch, L] of a
/// numeric or bool type with L as params.key_padding_length allows (L ==
/// total_kv_len; with broadcasting also 1, whose one entry serves every key),
/// or (with KeyPaddingValues::kBinary) holds a value other than 0 and 1. The
/// result is per key whatever L was.
absl::StatusOr<KeyPadding> PrepareKeyPadding(const KernelContext& ctx, const AttentionParams& params,
                                             const AttentionShapes& s, const Tensor& mask);

}  // namespace attune::attention
