#include "absl/strings/str_cat.h"
#include "ops/elementwise/binary.h"
#include "ops/elementwise/unary.h"

namespace attune::elementwise {

absl::StatusOr<const Tensor*> RequiredInput(const KernelContext& ctx, int index, const std::string& label) {
  const Tensor* t = ctx.input(index);
  if (t == nullptr || t->empty())
    return absl::InvalidArgumentError(absl::StrCat(label, ": required input ", index, " is missing"));
  return t;
}

absl::StatusOr<std::array<const Tensor*, 2>> BinaryInputs(const KernelContext& ctx, const std::string& label) {
  ASSIGN_OR_RETURN(const Tensor* a, RequiredInput(ctx, 0, label));
  ASSIGN_OR_RETURN(const Tensor* b, RequiredInput(ctx, 1, label));
  return std::array<const Tensor*, 2>{a, b};
}

}  // namespace attune::elementwise
