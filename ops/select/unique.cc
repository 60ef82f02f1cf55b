// Unique: the distinct elements (or, with an axis, the distinct slices along
// it), sorted ascending or in order of first occurrence, with the index of
// each one's first occurrence, every input's position in the output, and
// the counts.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <numeric>
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

// A strict weak order on values with NaN above every number and equal to itself.
template <typename C>
struct TotalLess {
  bool operator()(const std::vector<C>& a, const std::vector<C>& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](C x, C y) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(x)) return false;
        if (std::isnan(y)) return true;
      }
      return x < y;
    });
  }
};

}  // namespace

SelectKernelOr MakeUniqueKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  ASSIGN_OR_RETURN(int64_t sorted, info.attrs().GetInt("sorted", 1));
  ASSIGN_OR_RETURN(std::optional<int64_t> axis_attr, OptionalAxisAttribute(info));
  return MakeKernel([=](KernelContext& ctx) -> absl::Status {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label, ": needs input X"));
    std::vector<int64_t> s = x->shape();
    ASSIGN_OR_RETURN(const int64_t axis, ResolveOptionalAxis(axis_attr, x->num_elements(), s, label));
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= s[i];
    for (size_t i = axis + 1; i < s.size(); ++i) inner *= s[i];
    const int64_t len = s[axis];
    return VisitType(NumericTypes{} + TypeList<bool>{}, x->type(), absl::StrCat(label, ": input X"),
                     [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using C = ComputeOf<T>;
      const StorageOf<T>* in = x->data<StorageOf<T>>();
      // Slice i as a vector of values, compared lexicographically.
      auto slice = [&](int64_t i) {
        std::vector<C> v;
        v.reserve(outer * inner);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < inner; ++j) v.push_back(Arith<T>::Load(in[(o * len + i) * inner + j]));
        return v;
      };
      std::map<std::vector<C>, int64_t, TotalLess<C>> first;  // slice -> unique id in order of first occurrence
      std::vector<int64_t> first_index, counts, inverse(len);
      std::vector<std::vector<C>> slices;
      for (int64_t i = 0; i < len; ++i) {
        std::vector<C> v = slice(i);
        auto [it, inserted] = first.emplace(v, static_cast<int64_t>(slices.size()));
        if (inserted) {
          first_index.push_back(i);
          counts.push_back(0);
          slices.push_back(std::move(v));
        }
        inverse[i] = it->second;
        ++counts[it->second];
      }
      const int64_t u = static_cast<int64_t>(slices.size());
      std::vector<int64_t> order(u);  // output position -> unique id
      std::iota(order.begin(), order.end(), 0);
      if (sorted) std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return TotalLess<C>()(slices[a], slices[b]); });
      std::vector<int64_t> position(u);
      for (int64_t p = 0; p < u; ++p) position[order[p]] = p;
      std::vector<int64_t> out_shape = axis_attr ? x->shape() : std::vector<int64_t>{u};
      out_shape[axis] = u;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
      StorageOf<T>* out = y->data<StorageOf<T>>();
      for (int64_t p = 0; p < u; ++p) {
        const std::vector<C>& v = slices[order[p]];
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < inner; ++j) out[(o * u + p) * inner + j] = Arith<T>::Store(v[o * inner + j]);
      }
      auto write = [&](int i, int64_t n, auto value_of) -> absl::Status {
        if (ctx.num_outputs() <= i || !ctx.output_wanted(i)) return absl::OkStatus();
        ASSIGN_OR_RETURN(Tensor * t, ctx.AllocateOutputForOverwrite(i, ElementType::kInt64, {n}));
        for (int64_t k = 0; k < n; ++k) t->data<int64_t>()[k] = value_of(k);
        return absl::OkStatus();
      };
      RETURN_IF_ERROR(write(1, u, [&](int64_t p) { return first_index[order[p]]; }));
      RETURN_IF_ERROR(write(2, len, [&](int64_t i) { return position[inverse[i]]; }));
      RETURN_IF_ERROR(write(3, u, [&](int64_t p) { return counts[order[p]]; }));
      return absl::OkStatus();
    });
  });
}

}  // namespace attune
