#include "engine/generate/step_inputs.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune {

absl::StatusOr<Tensor> MakeMatrix(ElementType type, int64_t rows, int64_t cols, const std::vector<int64_t>& values) {
  ASSIGN_OR_RETURN(Tensor t, Tensor::Create(type, {rows, cols}));
  const size_t n = values.size();
  switch (type) {
    case ElementType::kInt64:
      std::copy(values.begin(), values.end(), t.data<int64_t>());
      break;
    case ElementType::kInt32:
      for (size_t i = 0; i < n; ++i) t.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
      break;
    case ElementType::kFloat32:
      for (size_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(values[i]);
      break;
    case ElementType::kBool:
      for (size_t i = 0; i < n; ++i) t.data<bool>()[i] = values[i] != 0;
      break;
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("an ids/mask/position input of type ", ElementTypeName(type), " is not supported"));
  }
  return t;
}

std::vector<int64_t> BatchLayout::PromptIds(const std::vector<std::vector<int64_t>>& prompts, int64_t pad_id) const {
  std::vector<int64_t> ids(batch * prompt_len, pad_id);
  for (int64_t r = 0; r < batch; ++r)
    std::copy(prompts[r].begin(), prompts[r].end(), ids.begin() + r * prompt_len + pad[r]);
  return ids;
}

std::vector<int64_t> BatchLayout::Mask(int64_t total) const {
  std::vector<int64_t> mask(batch * total, 1);
  for (int64_t r = 0; r < batch; ++r) std::fill_n(mask.begin() + r * total, std::min(pad[r], total), 0);
  return mask;
}

std::vector<int64_t> BatchLayout::Positions(int64_t from, int64_t to) const {
  std::vector<int64_t> pos;
  pos.reserve(batch * (to - from));
  for (int64_t r = 0; r < batch; ++r)
    for (int64_t j = from; j < to; ++j) pos.push_back(std::max<int64_t>(j - pad[r], 0));
  return pos;
}

}  // namespace attune
