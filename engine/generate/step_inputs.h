// The per-step feeds of a decoder: token ids, attention mask and position ids
// for a left-padded batch, in whatever integer (or float/bool mask) type the
// graph declares.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

/// A (rows, cols) tensor of `type` from int64 values (int64, int32, float32 or bool).
absl::StatusOr<Tensor> MakeMatrix(ElementType type, int64_t rows, int64_t cols, const std::vector<int64_t>& values);

/// The padding of a batch: row r's prompt starts after pad[r] filler positions.
struct BatchLayout {
  int64_t batch = 0;
  int64_t prompt_len = 0;    // the longest prompt = padded length
  std::vector<int64_t> pad;  // per row

  /// Token ids (B, prompt_len), filler `pad_id` on the left.
  std::vector<int64_t> PromptIds(const std::vector<std::vector<int64_t>>& prompts, int64_t pad_id) const;
  /// Mask (B, total): 0 on a row's filler positions, 1 after.
  std::vector<int64_t> Mask(int64_t total) const;
  /// Position ids of positions [from, to) per row: the count of real tokens
  /// before each (0 on filler), as Hugging Face derives them from the mask.
  std::vector<int64_t> Positions(int64_t from, int64_t to) const;
};

}  // namespace attune
