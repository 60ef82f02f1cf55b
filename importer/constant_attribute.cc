#include "importer/constant_attribute.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune {
namespace {

constexpr std::array<const char*, 8> kValueAttributes = {"value",        "value_float",  "value_floats",
                                                         "value_int",    "value_ints",   "value_string",
                                                         "value_strings", "sparse_value"};

absl::Status Annotated(const absl::Status& status, std::string_view node) {
  return absl::Status(status.code(), absl::StrCat(Sv(node), ": ", status.message()));
}

template <typename T>
absl::StatusOr<Tensor> Vector1D(const std::vector<T>& values) {
  return Tensor::FromVector<T>({static_cast<int64_t>(values.size())}, values);
}

}  // namespace

absl::StatusOr<Tensor> ConstantValueFromAttributes(const Attributes& attributes, std::string_view node) {
  std::vector<std::string> present;
  for (const char* name : kValueAttributes)
    if (attributes.Has(name)) present.push_back(name);
  if (present.size() != 1)
    return absl::InvalidArgumentError(absl::StrCat(
        Sv(node), ": a Constant needs exactly one of value, value_float, value_floats, value_int, value_ints, ",
        "value_string, value_strings, sparse_value; found ", present.empty() ? "none" : absl::StrJoin(present, ", ")));
  const std::string& name = present.front();

  absl::StatusOr<Tensor> result;
  if (name == "value") {
    result = attributes.GetTensor(name);
  } else if (name == "value_float") {
    auto v = attributes.GetFloat(name);
    result = v.ok() ? absl::StatusOr<Tensor>(Tensor::Scalar<float>(*v)) : v.status();
  } else if (name == "value_int") {
    auto v = attributes.GetInt(name);
    result = v.ok() ? absl::StatusOr<Tensor>(Tensor::Scalar<int64_t>(*v)) : v.status();
  } else if (name == "value_floats") {
    auto v = attributes.GetFloats(name);
    result = v.ok() ? Vector1D(*v) : v.status();
  } else if (name == "value_ints") {
    auto v = attributes.GetInts(name);
    result = v.ok() ? Vector1D(*v) : v.status();
  } else {
    return absl::UnimplementedError(absl::StrCat(Sv(node), ": Constant attribute ", QuoteName(name),
                                                 " is not supported (Attune has no ",
                                                 name == "sparse_value" ? "sparse" : "string", " tensors)"));
  }
  if (!result.ok()) return Annotated(result.status(), node);
  if (result->empty()) return absl::InvalidArgumentError(absl::StrCat(Sv(node), ": Constant 'value' holds no tensor"));
  return result;
}

}  // namespace attune
