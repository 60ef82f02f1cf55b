// Node attributes: a named, typed value (ONNX AttributeProto without subgraphs).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"

namespace attune {

using AttributeValue = std::variant<int64_t, float, std::string, Tensor, std::vector<int64_t>, std::vector<float>,
                                    std::vector<std::string>>;

/// The attributes of one node, ordered by name.
class Attributes {
 public:
  void Set(std::string name, AttributeValue value) { values_[std::move(name)] = std::move(value); }
  void Erase(std::string_view name);
  bool Has(std::string_view name) const { return values_.find(name) != values_.end(); }
  const std::map<std::string, AttributeValue, std::less<>>& all() const { return values_; }
  bool empty() const { return values_.empty(); }

  // Typed getters: NotFound when absent (unless a default is given),
  // InvalidArgument when the attribute has another type.
  absl::StatusOr<int64_t> GetInt(std::string_view name) const;
  absl::StatusOr<int64_t> GetInt(std::string_view name, int64_t default_value) const;
  absl::StatusOr<float> GetFloat(std::string_view name) const;
  absl::StatusOr<float> GetFloat(std::string_view name, float default_value) const;
  absl::StatusOr<std::string> GetString(std::string_view name) const;
  absl::StatusOr<std::string> GetString(std::string_view name, std::string default_value) const;
  absl::StatusOr<Tensor> GetTensor(std::string_view name) const;
  absl::StatusOr<std::vector<int64_t>> GetInts(std::string_view name) const;
  absl::StatusOr<std::vector<int64_t>> GetInts(std::string_view name, std::vector<int64_t> default_value) const;
  absl::StatusOr<std::vector<float>> GetFloats(std::string_view name) const;
  absl::StatusOr<std::vector<std::string>> GetStrings(std::string_view name) const;

  /// One-line rendering such as "axis=1, perm=[0, 2, 1, 3]".
  std::string ToString() const;

 private:
  template <typename T>
  absl::StatusOr<T> Get(std::string_view name, const char* type_name) const;
  std::map<std::string, AttributeValue, std::less<>> values_;
};

}  // namespace attune
