// EyeLike (ones on diagonal k of a 2-D shape, in the dtype attribute's type
// or the input's) and OneHot (depth classes along a new axis, values
// [off, on]; a negative index counts from depth, an index out of range gives
// a row of off values).
#include <cmath>
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
namespace {

// An integer or float scalar input as a double.
absl::StatusOr<double> ScalarValue(const std::string& label, const char* name, const Tensor* t) {
  if (t == nullptr || t->num_elements() != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " must hold one value"));
  double v = 0;
  RETURN_IF_ERROR(VisitType(NumericTypes{}, t->type(), absl::StrCat(label, ": input ", name), [&](auto tag) {
    using T = typename decltype(tag)::type;
    v = static_cast<double>(Arith<T>::Load(t->data<StorageOf<T>>()[0]));
    return absl::OkStatus();
  }));
  return v;
}

}  // namespace

SelectKernelOr MakeEyeLikeKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(int64_t k, info.attrs().GetInt("k", 0));
  std::optional<ElementType> dtype;
  if (info.attrs().Has("dtype")) {
    ASSIGN_OR_RETURN(int64_t d, info.attrs().GetInt("dtype"));
    dtype = static_cast<ElementType>(d);
  }
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs input"));
    if (x->shape().size() != 2)
      return absl::InvalidArgumentError(absl::StrCat(label, ": input ", ShapeToString(x->shape()), " must be 2-D"));
    const ElementType type = dtype.value_or(x->type());
    return VisitType(AllTypes{}, type, absl::StrCat(label, ": output type"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutput(0, type, x->shape()));
      const int64_t rows = x->shape()[0], cols = x->shape()[1];
      StorageOf<T>* out = y->data<StorageOf<T>>();
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k;
        if (j >= 0 && j < cols) out[i * cols + j] = Arith<T>::Store(ComputeOf<T>(1));
      }
      return absl::OkStatus();
    });
  });
}

SelectKernelOr MakeOneHotKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(int64_t axis_attr, info.attrs().GetInt("axis", -1));
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* indices = ctx.input(0);
    const Tensor* values = ctx.input(2);
    if (indices == nullptr || values == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label, ": needs inputs indices, depth and values"));
    ASSIGN_OR_RETURN(double depth_v, ScalarValue(label, "depth", ctx.input(1)));
    const int64_t depth = static_cast<int64_t>(depth_v);
    if (!(depth_v >= 1) || depth_v > static_cast<double>(int64_t{1} << 40))
      return absl::InvalidArgumentError(absl::StrCat(label, ": depth is ", depth_v, "; it must be positive"));
    if (values->num_elements() != 2)
      return absl::InvalidArgumentError(absl::StrCat(label, ": values must hold [off_value, on_value]"));
    const std::vector<int64_t>& is = indices->shape();
    const int64_t rank = static_cast<int64_t>(is.size()) + 1;
    if (axis_attr < -rank || axis_attr >= rank)
      return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'axis' ", axis_attr, " is out of range"));
    const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
    std::vector<int64_t> out_shape = is;
    out_shape.insert(out_shape.begin() + axis, depth);
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= is[i];
    for (int64_t i = axis; i < rank - 1; ++i) inner *= is[i];
    std::vector<int64_t> idx(indices->num_elements());
    RETURN_IF_ERROR(VisitType(NumericTypes{}, indices->type(), absl::StrCat(label, ": input indices"), [&](auto tag) {
      using T = typename decltype(tag)::type;
      for (size_t i = 0; i < idx.size(); ++i) {
        const double v = static_cast<double>(Arith<T>::Load(indices->data<StorageOf<T>>()[i]));
        idx[i] = std::isfinite(v) ? static_cast<int64_t>(std::max(-1e15, std::min(1e15, v))) : depth;
      }
      return absl::OkStatus();
    }));
    const size_t elem = ElementSize(values->type());
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, values->type(), out_shape));
    const char* off = static_cast<const char*>(values->raw_data());
    const char* on = off + elem;
    char* out = static_cast<char*>(y->raw_data());
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t d = 0; d < depth; ++d)
        for (int64_t j = 0; j < inner; ++j) {
          int64_t v = idx[o * inner + j];
          if (v < 0) v += depth;
          std::memcpy(out + ((o * depth + d) * inner + j) * elem, v == d ? on : off, elem);
        }
    return absl::OkStatus();
  });
}

}  // namespace attune
