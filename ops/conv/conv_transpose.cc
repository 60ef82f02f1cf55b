// ONNX ConvTranspose (opsets 1, 11, 22) over 1 to N spatial axes, float32
// and float64: every input element scatters its products with the kernel
// into the output (y[o] += x[i] * w[k] for o = i * stride - pad_begin + k *
// dilation), one (n, output channel) plane per task, so threads never write
// the same element and every thread count gives the same bits.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/conv/conv_transpose_params.h"
#include "ops/conv/kernels.h"

namespace attune {
namespace {

// Per axis, for input position i and kernel position k (index i * kernel + k),
// the output position they reach, or -1 outside the output.
std::vector<std::vector<int64_t>> ReachTables(const ConvTransposeGeometry& g) {
  std::vector<std::vector<int64_t>> tables;
  for (int a = 0; a < g.spatial_rank(); ++a) {
    std::vector<int64_t> t(g.input[a] * g.kernel[a]);
    for (int64_t i = 0; i < g.input[a]; ++i)
      for (int64_t k = 0; k < g.kernel[a]; ++k) {
        const int64_t o = i * g.strides[a] - g.pad_begin[a] + k * g.dilations[a];
        t[i * g.kernel[a] + k] = o >= 0 && o < g.output[a] ? o : -1;
      }
    tables.push_back(std::move(t));
  }
  return tables;
}

// Row-major multi-indices of every flat index of `dims`.
std::vector<int64_t> MultiIndices(const std::vector<int64_t>& dims, int64_t count) {
  const int rank = static_cast<int>(dims.size());
  std::vector<int64_t> idx(count * rank);
  std::vector<int64_t> cur(rank, 0);
  for (int64_t f = 0; f < count; ++f) {
    for (int a = 0; a < rank; ++a) idx[f * rank + a] = cur[a];
    for (int a = rank - 1; a >= 0; --a) {
      if (++cur[a] < dims[a]) break;
      cur[a] = 0;
    }
  }
  return idx;
}

template <typename T>
void ConvTransposeCompute(const ConvTransposeGeometry& g, const T* x, const T* w, const T* b, T* y, int threads) {
  const int rank = g.spatial_rank();
  int64_t in_plane = 1, k_plane = 1, out_plane = 1;
  for (int a = 0; a < rank; ++a) in_plane *= g.input[a], k_plane *= g.kernel[a], out_plane *= g.output[a];
  std::vector<int64_t> out_strides(rank, 1);
  for (int a = rank - 2; a >= 0; --a) out_strides[a] = out_strides[a + 1] * g.output[a + 1];
  const auto reach = ReachTables(g);
  const auto in_idx = MultiIndices(g.input, in_plane);
  const auto k_idx = MultiIndices(g.kernel, k_plane);
  const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
  ParallelForRange(g.batch * g.out_channels, 1, threads, [&](int64_t begin, int64_t end) {
    for (int64_t plane = begin; plane < end; ++plane) {
      const int64_t n = plane / g.out_channels, mo = plane % g.out_channels, grp = mo / mg, m = mo % mg;
      T* out = y + plane * out_plane;
      const T bias = b != nullptr ? b[mo] : T{0};
      for (int64_t o = 0; o < out_plane; ++o) out[o] = bias;
      for (int64_t c = 0; c < cg; ++c) {
        const int64_t ci = grp * cg + c;
        const T* xin = x + (n * g.in_channels + ci) * in_plane;
        const T* wk = w + (ci * mg + m) * k_plane;
        for (int64_t kk = 0; kk < k_plane; ++kk) {
          const T wv = wk[kk];
          for (int64_t ii = 0; ii < in_plane; ++ii) {
            int64_t off = 0;
            bool inside = true;
            for (int a = 0; a < rank && inside; ++a) {
              const int64_t pos = reach[a][in_idx[ii * rank + a] * g.kernel[a] + k_idx[kk * rank + a]];
              inside = pos >= 0;
              off += pos * out_strides[a];
            }
            if (inside) out[off] += xin[ii] * wv;
          }
        }
      }
    }
  });
}

class ConvTransposeKernel final : public Kernel {
 public:
  ConvTransposeKernel(std::string label, ConvTransposeAttributes attrs)
      : label_(std::move(label)), attrs_(std::move(attrs)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (x == nullptr || w == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs X and W"));
    if (w->type() != x->type() || (b != nullptr && b->type() != x->type()))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": X, W and B must have one element type"));
    ASSIGN_OR_RETURN(ConvTransposeGeometry g, PlanConvTranspose(label_, attrs_, x->shape(), w->shape(),
                                                                b != nullptr ? &b->shape() : nullptr));
    return VisitType(TypeList<float, double>{}, x->type(), absl::StrCat(label_, ": input X"),
                     [&](auto tag) -> absl::Status {
                       using T = typename decltype(tag)::type;
                       ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), g.output_shape()));
                       if (y->num_elements() == 0) return absl::OkStatus();
                       ConvTransposeCompute<T>(g, x->data<T>(), w->data<T>(), b != nullptr ? b->data<T>() : nullptr,
                                               y->data<T>(), ctx.threads());
                       return absl::OkStatus();
                     });
  }

 private:
  std::string label_;
  ConvTransposeAttributes attrs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeConvTransposeKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 2 || info.num_inputs() > 3 || !info.input_present[0] || !info.input_present[1] ||
      info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes X, W and an optional B and gives one output Y"));
  ASSIGN_OR_RETURN(ConvTransposeAttributes attrs, ReadConvTransposeAttributes(label, info.attrs()));
  return std::make_unique<ConvTransposeKernel>(std::move(label), std::move(attrs));
}

}  // namespace attune
