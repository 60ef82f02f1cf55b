// Compress (the slices along an axis, or of the flattened input, whose
// condition is true; a shorter condition leaves the rest out) and NonZero
// (the indices of the non-zero elements, [rank, count], in row-major order).
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/type_dispatch.h"
#include "ops/select/kernels.h"

namespace attune {

absl::StatusOr<std::optional<int64_t>> OptionalAxisAttribute(const KernelInfo& info) {
  if (!info.attrs().Has("axis")) return std::nullopt;
  ASSIGN_OR_RETURN(int64_t axis, info.attrs().GetInt("axis"));
  return std::optional<int64_t>(axis);
}

absl::StatusOr<int64_t> ResolveOptionalAxis(const std::optional<int64_t>& axis_attr, int64_t num_elements,
                                            std::vector<int64_t>& shape, const std::string& label) {
  if (!axis_attr) {
    shape = {num_elements};
    return 0;
  }
  const int64_t rank = static_cast<int64_t>(shape.size());
  if (*axis_attr < -rank || *axis_attr >= rank)
    return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'axis' ", *axis_attr, " is out of range"));
  return *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
}

SelectKernelOr MakeCompressKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(std::optional<int64_t> axis_attr, OptionalAxisAttribute(info));
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* x = ctx.input(0);
    const Tensor* cond = ctx.input(1);
    if (x == nullptr || cond == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs input and condition"));
    if (cond->type() != ElementType::kBool || cond->shape().size() != 1)
      return absl::InvalidArgumentError(absl::StrCat(label, ": condition must be a 1-D bool tensor"));
    std::vector<int64_t> s = x->shape();
    ASSIGN_OR_RETURN(const int64_t axis, ResolveOptionalAxis(axis_attr, x->num_elements(), s, label));
    const int64_t len = s[axis];
    if (cond->num_elements() > len)
      return absl::InvalidArgumentError(absl::StrCat(label, ": condition has ", cond->num_elements(),
                                                     " entries, more than the axis's ", len));
    const uint8_t* c = cond->data<uint8_t>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond->num_elements(); ++i)
      if (c[i] != 0) keep.push_back(i);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= s[i];
    for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
    std::vector<int64_t> out_shape = s;
    out_shape[axis] = static_cast<int64_t>(keep.size());
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
    const size_t row = inner * ElementSize(x->type());
    const char* in = static_cast<const char*>(x->raw_data());
    char* out = static_cast<char*>(y->raw_data());
    for (int64_t o = 0; o < outer; ++o)
      for (size_t k = 0; k < keep.size(); ++k)
        std::memcpy(out + (o * keep.size() + k) * row, in + (o * len + keep[k]) * row, row);
    return absl::OkStatus();
  });
}

SelectKernelOr MakeNonZeroKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs input X"));
    std::vector<int64_t> hits;
    RETURN_IF_ERROR(VisitType(AllTypes{}, x->type(), absl::StrCat(label, ": input X"), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const StorageOf<T>* d = x->data<StorageOf<T>>();
      for (int64_t i = 0; i < x->num_elements(); ++i)
        if (Arith<T>::Load(d[i]) != ComputeOf<T>{}) hits.push_back(i);
      return absl::OkStatus();
    }));
    const std::vector<int64_t>& s = x->shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    const int64_t n = static_cast<int64_t>(hits.size());
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, ElementType::kInt64, {rank, n}));
    int64_t* out = y->data<int64_t>();
    for (int64_t h = 0; h < n; ++h) {
      int64_t rest = hits[h];
      for (int64_t a = rank - 1; a >= 0; --a) {
        out[a * n + h] = rest % s[a];
        rest /= s[a];
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace attune
