#include "ops/scatter/operands.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace attune::scatter {

absl::StatusOr<Operands> ReadOperands(const KernelContext& ctx, bool allow_int32, const std::string& label) {
  static constexpr const char* kNames[] = {"data", "indices", "updates"};
  for (int i = 0; i < 3; ++i)
    if (ctx.input(i) == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", i, " (", kNames[i], ") is missing"));
  Operands in{ctx.input(0), ctx.input(1), ctx.input(2)};
  if (in.data->rank() == 0) return absl::InvalidArgumentError(absl::StrCat(label, ": data must have rank >= 1"));
  const ElementType index_type = in.indices->type();
  if (index_type != ElementType::kInt64 && !(allow_int32 && index_type == ElementType::kInt32))
    return absl::InvalidArgumentError(absl::StrCat(label, ": indices (input 1) has type ", ElementTypeName(index_type),
                                                   allow_int32 ? "; supported: int32, int64" : "; supported: int64"));
  if (in.updates->type() != in.data->type())
    return absl::InvalidArgumentError(absl::StrCat(label, ": updates (input 2) has type ",
                                                   ElementTypeName(in.updates->type()), " but data has type ",
                                                   ElementTypeName(in.data->type()), "; they must match"));
  return in;
}

absl::Status IndexOutOfRange(const std::string& label, const Tensor& indices, int64_t flat, int64_t index,
                             int64_t axis, const Tensor& data) {
  // The element's position in indices, row-major from its flat offset.
  const std::vector<int64_t>& shape = indices.shape();
  std::vector<int64_t> position(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    position[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  const int64_t dim = data.shape()[axis];
  return absl::InvalidArgumentError(absl::StrCat(label, ": indices[", absl::StrJoin(position, ", "), "] = ", index,
                                                 " is out of range for axis ", axis, " of data ",
                                                 ShapeToString(data.shape()), " (valid: ", -dim, " to ", dim - 1, ")"));
}

}  // namespace attune::scatter
