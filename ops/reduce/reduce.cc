// ReduceSum/Mean/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp over any set of axes.
#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/reduce/numeric.h"
#include "ops/reduce/reduce_kernels.h"
#include "ops/reduce/reduce_plan.h"
#include "ops/shape/axis_util.h"

namespace attune {
namespace {

using reduce::Numeric;
using reduce::ReducePlan;

// Per-kind element map, combine and identity (the result of an empty reduction).
template <ReduceKind K, typename T>
struct Op {
  using A = typename Numeric<T>::Acc;
  static constexpr bool kMax = K == ReduceKind::kMax, kMin = K == ReduceKind::kMin;
  static constexpr bool kMul = K == ReduceKind::kProd;
  static A Init() {
    if constexpr (kMax) return Numeric<T>::Lowest();
    if constexpr (kMin) return Numeric<T>::Highest();
    if constexpr (kMul) return A(1);
    return A(0);
  }
  static A Map(A x, A shift) {
    if constexpr (K == ReduceKind::kSumSquare || K == ReduceKind::kL2) return reduce::WrapMul(x, x);
    if constexpr (K == ReduceKind::kL1) {
      if constexpr (std::is_unsigned_v<A>) return x;
      else if constexpr (std::is_integral_v<A>) return x < 0 ? static_cast<A>(0 - static_cast<uint64_t>(x)) : x;
      else return std::abs(x);
    }
    if constexpr (K == ReduceKind::kLogSumExp) return std::exp(x - shift);
    return x;
  }
  // Max and Min let NaN win, as numpy does.
  static bool IsNan(A v) {
    if constexpr (std::is_floating_point_v<A>) return std::isnan(v);
    else return false;
  }
  static A Combine(A a, A b) {
    if constexpr (kMax) return (b > a || IsNan(b)) ? b : a;
    if constexpr (kMin) return (b < a || IsNan(b)) ? b : a;
    if constexpr (kMul) return reduce::WrapMul(a, b);
    return reduce::WrapAdd(a, b);
  }
};

// A double result stored into an integer type: NaN to 0, out-of-range clamped.
template <typename T>
T FromDouble(double v) {
  if constexpr (std::is_integral_v<T>) {
    if (std::isnan(v)) return T(0);
    if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return Numeric<T>::Store(static_cast<typename Numeric<T>::Acc>(v));
  }
}

template <ReduceKind K, typename T>
T Finalize(typename Numeric<T>::Acc acc, int64_t n, typename Numeric<T>::Acc shift) {
  using A = typename Numeric<T>::Acc;
  if constexpr (std::is_integral_v<A>) {
    switch (K) {
      case ReduceKind::kMean: return n == 0 ? T(0) : FromDouble<T>(static_cast<double>(acc) / static_cast<double>(n));
      case ReduceKind::kL2: return FromDouble<T>(std::sqrt(static_cast<double>(acc)));
      case ReduceKind::kLogSum: return FromDouble<T>(std::log(static_cast<double>(acc)));
      case ReduceKind::kLogSumExp: return FromDouble<T>(std::log(static_cast<double>(acc)) + static_cast<double>(shift));
      default: return Numeric<T>::Store(acc);
    }
  } else {
    switch (K) {
      case ReduceKind::kMean: return Numeric<T>::Store(acc / static_cast<A>(n));
      case ReduceKind::kL2: return Numeric<T>::Store(std::sqrt(acc));
      case ReduceKind::kLogSum: return Numeric<T>::Store(std::log(acc));
      case ReduceKind::kLogSumExp: return Numeric<T>::Store(std::log(acc) + shift);
      default: return Numeric<T>::Store(acc);
    }
  }
}

// Folds n contiguous elements; eight independent partial results let the compiler vectorise.
template <ReduceKind K, typename T>
typename Numeric<T>::Acc FoldRow(const T* x, int64_t n, typename Numeric<T>::Acc shift) {
  using A = typename Numeric<T>::Acc;
  using O = Op<K, T>;
  constexpr int kLanes = 8;
  A part[kLanes];
  for (int l = 0; l < kLanes; ++l) part[l] = O::Init();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] = O::Combine(part[l], O::Map(Numeric<T>::Load(x[i + l]), shift));
  A acc = O::Init();
  for (; i < n; ++i) acc = O::Combine(acc, O::Map(Numeric<T>::Load(x[i]), shift));
  for (int l = 0; l < kLanes; ++l) acc = O::Combine(acc, part[l]);
  return acc;
}

// Computes the folded value of every output; shift (per output) is only read by LogSumExp.
template <ReduceKind K, typename T>
void FoldAll(const ReducePlan& p, const T* x, typename Numeric<T>::Acc* out,
             const typename Numeric<T>::Acc* shift, int threads) {
  using A = typename Numeric<T>::Acc;
  using O = Op<K, T>;
  if (p.inner_reduced) {
    const int nt = p.outer_count * p.group >= (1 << 15) ? threads : 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
    for (int64_t o = 0; o < p.outer_count; ++o) {
      const int64_t base = reduce::RunOffset(o, p.outer_sizes, p.outer_strides);
      const A s = shift ? shift[o] : A(0);
      A acc = O::Init();
      for (int64_t r = 0; r < p.red_count; ++r)
        acc = O::Combine(acc, FoldRow<K, T>(x + base + reduce::RunOffset(r, p.red_sizes, p.red_strides), p.inner, s));
      out[o] = acc;
    }
    return;
  }
  // The last run is kept: fold whole rows of `inner` outputs at a time, in column blocks.
  constexpr int64_t kBlock = 256;
  const int64_t blocks = (p.inner + kBlock - 1) / kBlock;
  const int nt = p.outer_count * p.inner * p.red_count >= (1 << 15) ? threads : 1;
#pragma omp parallel for num_threads(nt) schedule(static) if (nt > 1)
  for (int64_t w = 0; w < p.outer_count * blocks; ++w) {
    const int64_t o = w / blocks, j0 = (w % blocks) * kBlock, len = std::min(kBlock, p.inner - j0);
    const int64_t base = reduce::RunOffset(o, p.outer_sizes, p.outer_strides) + j0;
    A* acc = out + o * p.inner + j0;
    const A* s = shift ? shift + o * p.inner + j0 : nullptr;
    for (int64_t j = 0; j < len; ++j) acc[j] = O::Init();
    for (int64_t r = 0; r < p.red_count; ++r) {
      const T* row = x + base + reduce::RunOffset(r, p.red_sizes, p.red_strides);
      if (s != nullptr) {
        for (int64_t j = 0; j < len; ++j) acc[j] = O::Combine(acc[j], O::Map(Numeric<T>::Load(row[j]), s[j]));
      } else {
        for (int64_t j = 0; j < len; ++j) acc[j] = O::Combine(acc[j], O::Map(Numeric<T>::Load(row[j]), A(0)));
      }
    }
  }
}

template <ReduceKind K, typename T>
absl::Status ReduceTyped(KernelContext& ctx, const Tensor& data, const std::vector<bool>& reduced, Tensor& out) {
  using A = typename Numeric<T>::Acc;
  const int64_t n_out = out.num_elements();
  if (n_out == 0) return absl::OkStatus();
  T* y = out.data<T>();
  if (data.num_elements() == 0) {  // every output reduces an empty set
    for (int64_t i = 0; i < n_out; ++i) y[i] = Finalize<K, T>(Op<K, T>::Init(), 0, A(0));
    return absl::OkStatus();
  }
  const ReducePlan plan = reduce::MakeReducePlan(data.shape(), reduced);
  std::vector<A> acc(n_out), shift;
  const T* x = data.data<T>();
  if constexpr (K == ReduceKind::kLogSumExp) {
    // Stable: fold exp(x - max); an infinite max (all -inf, or +inf) shifts by 0.
    shift.resize(n_out);
    FoldAll<ReduceKind::kMax, T>(plan, x, shift.data(), nullptr, ctx.threads());
    for (A& m : shift)
      if (std::isinf(m)) m = A(0);
    FoldAll<K, T>(plan, x, acc.data(), shift.data(), ctx.threads());
  } else {
    FoldAll<K, T>(plan, x, acc.data(), nullptr, ctx.threads());
  }
  for (int64_t i = 0; i < n_out; ++i) y[i] = Finalize<K, T>(acc[i], plan.group, shift.empty() ? A(0) : shift[i]);
  return absl::OkStatus();
}

struct ReduceConfig {
  ReduceKind kind;
  const char* name;
  bool keepdims;
  bool noop_with_empty_axes;
  bool axes_from_input;
  std::optional<std::vector<int64_t>> attr_axes;
  bool allow_bool;
};

template <ReduceKind K>
absl::Status Dispatch(const ReduceConfig& c, KernelContext& ctx, const Tensor& data, const std::vector<bool>& reduced,
                      Tensor& out) {
  absl::Status status;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    // exp of an integer sum has no integer answer worth computing.
    if constexpr (K == ReduceKind::kLogSumExp && std::is_integral_v<T>)
      status = absl::UnimplementedError(absl::StrCat(c.name, ": integer inputs are not supported"));
    else
      status = ReduceTyped<K, T>(ctx, data, reduced, out);
  };
  bool ok = reduce::DispatchType<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>(data.type(), run);
  if (!ok && (K == ReduceKind::kMax || K == ReduceKind::kMin)) {
    ok = reduce::DispatchType<int8_t, uint8_t>(data.type(), run) ||
         (c.allow_bool && reduce::DispatchType<bool>(data.type(), run));
  }
  if (!ok)
    return absl::InvalidArgumentError(absl::StrCat(c.name, ": unsupported input type ", data.DebugString()));
  return status;
}

absl::Status ReduceRun(const ReduceConfig& c, KernelContext& ctx) {
  ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, c.name, "data"));
  std::vector<int64_t> axes;
  if (c.axes_from_input) {
    if (const Tensor* t = ctx.input(1); t != nullptr && !t->empty()) {
      ASSIGN_OR_RETURN(axes, ReadIndexValues(*t, absl::StrCat(c.name, ": input 'axes'"), IndexTypes::kInt64Only));
      if (t->rank() > 1)
        return absl::InvalidArgumentError(absl::StrCat(c.name, ": input 'axes' must be 1-D, got ", t->DebugString()));
    }
  } else if (c.attr_axes) {
    axes = *c.attr_axes;
  }
  const int64_t rank = data->rank();
  std::vector<bool> reduced(rank, false);
  if (axes.empty()) {
    // noop: reduce over no axes, which still applies the per-element steps (ReduceL2 gives |x|).
    if (!c.noop_with_empty_axes) std::fill(reduced.begin(), reduced.end(), true);
  } else {
    ASSIGN_OR_RETURN(std::vector<int64_t> normalized, NormalizeAxes(axes, rank, c.name));
    for (int64_t a : normalized) reduced[a] = true;
  }
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) out_shape.push_back(data->shape()[d]);
    else if (c.keepdims) out_shape.push_back(1);
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, data->type(), out_shape));
  switch (c.kind) {
    case ReduceKind::kSum: return Dispatch<ReduceKind::kSum>(c, ctx, *data, reduced, *out);
    case ReduceKind::kMean: return Dispatch<ReduceKind::kMean>(c, ctx, *data, reduced, *out);
    case ReduceKind::kMax: return Dispatch<ReduceKind::kMax>(c, ctx, *data, reduced, *out);
    case ReduceKind::kMin: return Dispatch<ReduceKind::kMin>(c, ctx, *data, reduced, *out);
    case ReduceKind::kProd: return Dispatch<ReduceKind::kProd>(c, ctx, *data, reduced, *out);
    case ReduceKind::kL1: return Dispatch<ReduceKind::kL1>(c, ctx, *data, reduced, *out);
    case ReduceKind::kL2: return Dispatch<ReduceKind::kL2>(c, ctx, *data, reduced, *out);
    case ReduceKind::kSumSquare: return Dispatch<ReduceKind::kSumSquare>(c, ctx, *data, reduced, *out);
    case ReduceKind::kLogSum: return Dispatch<ReduceKind::kLogSum>(c, ctx, *data, reduced, *out);
    case ReduceKind::kLogSumExp: return Dispatch<ReduceKind::kLogSumExp>(c, ctx, *data, reduced, *out);
  }
  return absl::InternalError("unknown reduction");
}

const char* ReduceName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kSum: return "ReduceSum";
    case ReduceKind::kMean: return "ReduceMean";
    case ReduceKind::kMax: return "ReduceMax";
    case ReduceKind::kMin: return "ReduceMin";
    case ReduceKind::kProd: return "ReduceProd";
    case ReduceKind::kL1: return "ReduceL1";
    case ReduceKind::kL2: return "ReduceL2";
    case ReduceKind::kSumSquare: return "ReduceSumSquare";
    case ReduceKind::kLogSum: return "ReduceLogSum";
    case ReduceKind::kLogSumExp: return "ReduceLogSumExp";
  }
  return "Reduce";
}

}  // namespace

ReduceKernelOr MakeReduceKernel(const KernelInfo& info, ReduceKind kind, int axes_input_since) {
  ReduceConfig c;
  c.kind = kind;
  c.name = ReduceName(kind);
  ASSIGN_OR_RETURN(const int64_t keepdims, info.attrs().GetInt("keepdims", 1));
  ASSIGN_OR_RETURN(const int64_t noop, info.attrs().GetInt("noop_with_empty_axes", 0));
  c.keepdims = keepdims != 0;
  c.axes_from_input = info.opset >= axes_input_since;
  c.noop_with_empty_axes = c.axes_from_input && noop != 0;
  c.allow_bool = info.opset >= 20;
  if (!c.axes_from_input && info.attrs().Has("axes")) {
    ASSIGN_OR_RETURN(c.attr_axes, info.attrs().GetInts("axes"));
  }
  if (c.axes_from_input && info.attrs().Has("axes"))
    return absl::InvalidArgumentError(
        absl::StrCat(c.name, ": from opset ", axes_input_since, " axes is an input, not an attribute"));
  return MakeKernel([c](KernelContext& ctx) { return ReduceRun(c, ctx); });
}

}  // namespace attune
