// Tensor contents as the protocol carries them: a JSON array (nested or flat,
// row-major) or raw little-endian bytes (the binary tensor data extension and
// gRPC's raw contents).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "nlohmann/json.hpp"

namespace attune::server {

/// A tensor of `type` and `shape` from a JSON array of its elements (nested
/// as the shape or flat). InvalidArgument naming `name` for a count that is
/// not the shape's, an element of the wrong kind or out of range, or a tensor
/// above `max_bytes`.
absl::StatusOr<Tensor> TensorFromJson(const std::string& name, const nlohmann::json& data, ElementType type,
                                      const std::vector<int64_t>& shape, int64_t max_bytes);
/// A tensor from its raw bytes; their count must be the shape's exactly.
absl::StatusOr<Tensor> TensorFromBytes(const std::string& name, std::string_view bytes, ElementType type,
                                       const std::vector<int64_t>& shape, int64_t max_bytes);
/// The bytes a tensor occupies (row-major, little-endian).
std::string_view TensorBytes(const Tensor& tensor);
/// A flat JSON array of the elements (FP16 and BF16 as numbers; NaN and
/// infinities become null, as JSON has no such numbers).
nlohmann::json TensorToJson(const Tensor& tensor);
/// The shape's element count and bytes, checked against overflow, negative
/// dims and `max_bytes`.
absl::StatusOr<int64_t> CheckedTensorBytes(const std::string& name, ElementType type,
                                           const std::vector<int64_t>& shape, int64_t max_bytes);
/// The deepest nesting of arrays and objects in `text`, a JSON document, read
/// without parsing it (strings skipped): checked before a recursive parser sees it.
int JsonNestingDepth(std::string_view text);

}  // namespace attune::server
