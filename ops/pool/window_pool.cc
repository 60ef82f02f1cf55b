// MaxPool, AveragePool and LpPool over 1 to N spatial axes. Per axis, each
// output position's window is listed once per run (the in-bounds input
// positions, and for count_include_pad how many positions lie inside the
// padded extent); each (n, c) plane then walks its outputs and reduces the
// product of those lists. Float16 and bfloat16 compute in float.
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/pool/kernels.h"
#include "ops/pool/pool_params.h"

namespace attune {
namespace {

// One spatial axis: per output position, the in-bounds input positions of
// its window and the count of window positions inside the padded extent.
struct AxisWindows {
  std::vector<std::vector<int64_t>> positions;
  std::vector<int64_t> padded_count;
};

AxisWindows ListWindows(const PoolGeometry& g, int a) {
  AxisWindows w;
  w.positions.resize(g.output[a]);
  w.padded_count.resize(g.output[a]);
  for (int64_t o = 0; o < g.output[a]; ++o)
    for (int64_t k = 0; k < g.kernel[a]; ++k) {
      const int64_t p = o * g.strides[a] - g.pad_begin[a] + k * g.dilations[a];
      if (p >= 0 && p < g.input[a]) w.positions[o].push_back(p);
      if (p >= -g.pad_begin[a] && p < g.input[a] + g.pad_end[a]) ++w.padded_count[o];
    }
  return w;
}

// The row-major offsets (and, for MaxPool's column-major Indices, the
// column-major ones) of every in-bounds element of one output's window.
struct WindowOffsets {
  std::vector<int64_t> row_major, column_major;
  int64_t padded_count = 1;
};

void CollectWindow(const PoolGeometry& g, const std::vector<AxisWindows>& axes, const std::vector<int64_t>& out_index,
                   bool column_major, WindowOffsets& w) {
  const int rank = g.spatial_rank();
  w.row_major.assign(1, 0);
  w.column_major.assign(1, 0);
  w.padded_count = 1;
  int64_t col_stride = 1;
  for (int a = 0; a < rank; ++a) {
    const std::vector<int64_t>& pos = axes[a].positions[out_index[a]];
    w.padded_count *= axes[a].padded_count[out_index[a]];
    std::vector<int64_t> row, col;
    row.reserve(w.row_major.size() * pos.size());
    for (size_t i = 0; i < w.row_major.size(); ++i)
      for (int64_t p : pos) {
        row.push_back(w.row_major[i] * g.input[a] + p);
        if (column_major) col.push_back(w.column_major[i] + p * col_stride);
      }
    w.row_major.swap(row);
    if (column_major) w.column_major.swap(col);
    col_stride *= g.input[a];
  }
}

template <typename T>
struct PoolRun {
  PoolKind kind;
  const PoolAttributes& attrs;
  const PoolGeometry& g;
  const StorageOf<T>* x;
  StorageOf<T>* y;
  int64_t* indices;  // MaxPool's second output, or null

  using C = ComputeOf<T>;
  using Acc = std::conditional_t<std::is_same_v<C, double>, double, std::conditional_t<kIsFloat<T>, float, C>>;

  // A window's maximum, element by element in window order: a NaN wins and
  // the first NaN is kept; an empty window gives the lowest value.
  struct RunningMax {
    C best = std::numeric_limits<C>::lowest();
    bool any = false;
    // Whether v is the new maximum.
    bool Take(C v) {
      bool take = v > best || !any;
      if constexpr (kIsFloat<T>) take = take || (std::isnan(v) && !std::isnan(best));
      if (take) best = v;
      any = true;
      return take;
    }
  };

  // AveragePool's divisor: the window's positions inside the padded extent
  // (count_include_pad) or inside the input.
  C Mean(Acc sum, int64_t padded_count, int64_t in_bounds) const {
    const int64_t count = attrs.count_include_pad ? padded_count : in_bounds;
    return static_cast<C>(sum / static_cast<Acc>(count));
  }

  void Plane(int64_t plane, const std::vector<AxisWindows>& axes, WindowOffsets& w) const {
    const int rank = g.spatial_rank();
    int64_t in_plane = 1, out_plane = 1;
    for (int a = 0; a < rank; ++a) in_plane *= g.input[a], out_plane *= g.output[a];
    const StorageOf<T>* xp = x + plane * in_plane;
    std::vector<int64_t> out_index(rank, 0);
    for (int64_t o = 0; o < out_plane; ++o) {
      CollectWindow(g, axes, out_index, indices != nullptr && attrs.storage_order == 1, w);
      C result{};
      if (kind == PoolKind::kMax) {
        RunningMax max;
        int64_t arg = -1;
        for (size_t i = 0; i < w.row_major.size(); ++i)
          if (max.Take(Arith<T>::Load(xp[w.row_major[i]]))) arg = static_cast<int64_t>(i);
        result = max.best;
        if (indices != nullptr) {
          const int64_t local = arg < 0 ? 0 : (attrs.storage_order == 1 ? w.column_major[arg] : w.row_major[arg]);
          indices[plane * out_plane + o] = plane * in_plane + local;
        }
      } else if constexpr (kIsFloat<T>) {
        Acc sum = 0;
        if (kind == PoolKind::kAverage) {
          for (int64_t off : w.row_major) sum += static_cast<Acc>(Arith<T>::Load(xp[off]));
          result = Mean(sum, w.padded_count, static_cast<int64_t>(w.row_major.size()));
        } else {
          for (int64_t off : w.row_major)
            sum += static_cast<Acc>(std::pow(std::fabs(static_cast<double>(Arith<T>::Load(xp[off]))), attrs.p));
          result = static_cast<C>(std::pow(static_cast<double>(sum), 1.0 / attrs.p));
        }
      }
      y[plane * out_plane + o] = Arith<T>::Store(result);
      for (int a = rank - 1; a >= 0; --a) {
        if (++out_index[a] < g.output[a]) break;
        out_index[a] = 0;
      }
    }
  }

  // Plane() for two spatial axes and Max or Average without Indices, the
  // CNN case: the same windows reduced in the same order (rows, then columns
  // within a row), without listing each window's offsets.
  void Plane2d(int64_t plane, const std::vector<AxisWindows>& axes) const {
    const int64_t in_w = g.input[1], out_h = g.output[0], out_w = g.output[1];
    const StorageOf<T>* xp = x + plane * g.input[0] * in_w;
    StorageOf<T>* yp = y + plane * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      const std::vector<int64_t>& rows = axes[0].positions[oh];
      for (int64_t ow = 0; ow < out_w; ++ow) {
        const std::vector<int64_t>& cols = axes[1].positions[ow];
        C result{};
        if (kind == PoolKind::kMax) {
          RunningMax max;
          for (int64_t r : rows)
            for (int64_t c : cols) max.Take(Arith<T>::Load(xp[r * in_w + c]));
          result = max.best;
        } else if constexpr (kIsFloat<T>) {
          Acc sum = 0;
          for (int64_t r : rows)
            for (int64_t c : cols) sum += static_cast<Acc>(Arith<T>::Load(xp[r * in_w + c]));
          result = Mean(sum, axes[0].padded_count[oh] * axes[1].padded_count[ow],
                        static_cast<int64_t>(rows.size() * cols.size()));
        }
        yp[oh * out_w + ow] = Arith<T>::Store(result);
      }
    }
  }

  void Run(int threads) const {
    std::vector<AxisWindows> axes;
    for (int a = 0; a < g.spatial_rank(); ++a) axes.push_back(ListWindows(g, a));
    int64_t out_plane = 1;
    for (int64_t d : g.output) out_plane *= d;
    ParallelForRange(g.batch * g.channels, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(out_plane, 1)),
                     threads, [&](int64_t begin, int64_t end) {
                       const bool plain_2d = g.spatial_rank() == 2 && indices == nullptr && kind != PoolKind::kLp;
                       WindowOffsets w;
                       for (int64_t p = begin; p < end; ++p) {
                         if (plain_2d) Plane2d(p, axes);
                         else Plane(p, axes, w);
                       }
                     });
  }
};

using MaxPoolTypes = decltype(FloatTypes{} + TypeList<int8_t, uint8_t>{});

class WindowPoolKernel final : public Kernel {
 public:
  WindowPoolKernel(std::string label, PoolKind kind, PoolAttributes attrs)
      : label_(std::move(label)), kind_(kind), attrs_(std::move(attrs)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input X"));
    ASSIGN_OR_RETURN(PoolGeometry g, PlanPool(label_, attrs_, x->shape()));
    const std::string what = absl::StrCat(label_, ": input X");
    auto run = [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), g.output_shape()));
      int64_t* indices = nullptr;
      if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
        ASSIGN_OR_RETURN(Tensor * i, ctx.AllocateOutputForOverwrite(1, ElementType::kInt64, g.output_shape()));
        indices = i->data<int64_t>();
      }
      if (y->num_elements() == 0) return absl::OkStatus();
      PoolRun<T>{kind_, attrs_, g, x->data<StorageOf<T>>(), y->data<StorageOf<T>>(), indices}.Run(ctx.threads());
      return absl::OkStatus();
    };
    if (kind_ == PoolKind::kMax) return VisitType(MaxPoolTypes{}, x->type(), what, run);
    return VisitType(FloatTypes{}, x->type(), what, run);
  }

 private:
  std::string label_;
  PoolKind kind_;
  PoolAttributes attrs_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeWindowPoolKernel(const KernelInfo& info, PoolKind kind) {
  std::string label = NodeLabel(info);
  const int max_outputs = kind == PoolKind::kMax ? 2 : 1;
  if (info.num_inputs() != 1 || !info.input_present[0] || info.num_outputs < 1 || info.num_outputs > max_outputs)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes one input X and gives ",
                                                   max_outputs == 2 ? "Y and an optional Indices" : "one output Y",
                                                   "; the node has ", info.num_inputs(), " inputs and ",
                                                   info.num_outputs, " outputs"));
  const char* op = kind == PoolKind::kMax ? "MaxPool" : kind == PoolKind::kAverage ? "AveragePool" : "LpPool";
  ASSIGN_OR_RETURN(PoolAttributes attrs, ReadPoolAttributes(label, op, info.opset, info.attrs()));
  return std::make_unique<WindowPoolKernel>(std::move(label), kind, std::move(attrs));
}

}  // namespace attune
