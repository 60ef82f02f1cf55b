// Pad (opsets 1 to 23) and CenterCropPad (18): constant, reflect, edge and wrap, with negative pads
// cropping, and axes (opset 18). Each axis gets a map from output position to
// input position (or -1 for the constant), then every output row is gathered
// through the maps.
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/common/node_label.h"
#include "ops/common/numeric.h"
#include "ops/common/parallel.h"
#include "ops/common/type_dispatch.h"
#include "ops/shape/shape_kernels.h"

namespace attune {
namespace {

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

// The input position output position `o` reads on an axis of length n padded by `begin`; -1: the constant.
int64_t SourceIndex(PadMode mode, int64_t o, int64_t begin, int64_t n) {
  int64_t i = o - begin;
  if (i >= 0 && i < n) return i;
  switch (mode) {
    case PadMode::kConstant: return -1;
    case PadMode::kEdge: return i < 0 ? 0 : n - 1;
    case PadMode::kWrap: return ((i % n) + n) % n;
    case PadMode::kReflect:
      if (n == 1) return 0;
      {
        const int64_t period = 2 * (n - 1);
        i = ((i % period) + period) % period;
        return i < n ? i : period - i;
      }
  }
  return -1;
}

absl::StatusOr<std::vector<int64_t>> IntsOf(const std::string& label, const char* name, const Tensor& t) {
  if (t.type() != ElementType::kInt64 || t.shape().size() > 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": input ", name, " must be a 1-D int64 tensor"));
  return std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + t.num_elements());
}

// Writes y[i] = x[maps(i)] for every output index, `fill` where a map gives -1.
template <typename S>
void GatherThroughMaps(const S* x, S* y, const std::vector<int64_t>& in_shape, const std::vector<int64_t>& out_shape,
                   const std::vector<std::vector<int64_t>>& maps, S fill, int threads) {
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  if (rank == 0) {
    y[0] = x[0];
    return;
  }
  std::vector<int64_t> in_strides(rank, 1);
  for (int64_t a = rank - 2; a >= 0; --a) in_strides[a] = in_strides[a + 1] * in_shape[a + 1];
  const int64_t row = out_shape[rank - 1];
  int64_t rows = 1;
  for (int64_t a = 0; a + 1 < rank; ++a) rows *= out_shape[a];
  const std::vector<int64_t>& last = maps[rank - 1];
  ParallelForRange(rows, std::max<int64_t>(1, kCheapOpGrain / std::max<int64_t>(row, 1)), threads,
                   [&](int64_t rb, int64_t re) {
                     for (int64_t r = rb; r < re; ++r) {
                       int64_t rest = r, offset = 0;
                       bool constant = false;
                       for (int64_t a = rank - 2; a >= 0; --a) {
                         const int64_t src = maps[a][rest % out_shape[a]];
                         rest /= out_shape[a];
                         if (src < 0) constant = true;
                         else offset += src * in_strides[a];
                       }
                       S* out = y + r * row;
                       for (int64_t o = 0; o < row; ++o) out[o] = constant || last[o] < 0 ? fill : x[offset + last[o]];
                     }
                   });
}


class PadKernel final : public Kernel {
 public:
  PadKernel(std::string label, int opset, PadMode mode, std::vector<int64_t> attr_pads, float attr_value)
      : label_(std::move(label)), opset_(opset), mode_(mode), attr_pads_(std::move(attr_pads)), attr_value_(attr_value) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input data"));
    const std::vector<int64_t>& shape = x->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> pads = attr_pads_;
    std::vector<int64_t> axes;
    if (opset_ >= 11) {
      if (ctx.input(1) == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs input pads"));
      ASSIGN_OR_RETURN(pads, IntsOf(label_, "pads", *ctx.input(1)));
      if (ctx.input(3) != nullptr) {
        ASSIGN_OR_RETURN(axes, IntsOf(label_, "axes", *ctx.input(3)));
      }
    }
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    if (pads.size() != 2 * axes.size())
      return absl::InvalidArgumentError(absl::StrCat(label_, ": pads has ", pads.size(), " entries; input data ",
                                                     ShapeToString(shape), " needs ", 2 * axes.size()));
    std::vector<int64_t> begin(rank, 0), end(rank, 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k];
      if (a < -rank || a >= rank)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": axes has ", a, ", out of range for rank ", rank));
      if (a < 0) a += rank;
      begin[a] = pads[k];
      end[a] = pads[axes.size() + k];
    }
    std::vector<int64_t> out_shape(rank);
    std::vector<std::vector<int64_t>> maps(rank);
    for (int64_t a = 0; a < rank; ++a) {
      constexpr int64_t kLimit = int64_t{1} << 40;
      if (begin[a] > kLimit || end[a] > kLimit || begin[a] < -kLimit || end[a] < -kLimit)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": pads on axis ", a, " are too large"));
      out_shape[a] = shape[a] + begin[a] + end[a];
      if (out_shape[a] < 0)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": pads on axis ", a, " crop more than its ",
                                                       shape[a], " elements"));
      if (mode_ != PadMode::kConstant && shape[a] == 0 && out_shape[a] > 0)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": axis ", a, " of input data ", ShapeToString(shape),
                                                       " is empty; only constant mode can pad it"));
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
    if (y->num_elements() == 0) return absl::OkStatus();
    for (int64_t a = 0; a < rank; ++a) {
      maps[a].resize(out_shape[a]);
      for (int64_t o = 0; o < out_shape[a]; ++o) maps[a][o] = SourceIndex(mode_, o, begin[a], shape[a]);
    }
    const Tensor* value = opset_ >= 11 ? ctx.input(2) : nullptr;
    if (value != nullptr && (value->type() != x->type() || value->num_elements() != 1))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": constant_value must be one element of data's type"));
    return VisitType(AllTypes{}, x->type(), absl::StrCat(label_, ": input data"), [&](auto tag) -> absl::Status {
      using T = typename decltype(tag)::type;
      using S = StorageOf<T>;
      S fill{};
      if (value != nullptr) fill = value->data<S>()[0];
      else if constexpr (std::is_same_v<T, bool>) fill = attr_value_ != 0;
      else fill = Arith<T>::Store(static_cast<ComputeOf<T>>(attr_value_));
      GatherThroughMaps<S>(x->data<S>(), y->data<S>(), shape, out_shape, maps, fill, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  int opset_;
  PadMode mode_;
  std::vector<int64_t> attr_pads_;
  float attr_value_;
};

// CenterCropPad (opset 18): each listed axis cropped or zero-padded to its
// target length, the difference split with the odd element at the end.
class CenterCropPadKernel final : public Kernel {
 public:
  CenterCropPadKernel(std::string label, std::vector<int64_t> axes) : label_(std::move(label)), axes_(std::move(axes)) {}

  absl::Status Run(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* shape_t = ctx.input(1);
    if (x == nullptr || shape_t == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs input_data and shape"));
    ASSIGN_OR_RETURN(std::vector<int64_t> target, IntsOf(label_, "shape", *shape_t));
    const std::vector<int64_t>& in = x->shape();
    const int64_t rank = static_cast<int64_t>(in.size());
    std::vector<int64_t> axes = axes_;
    if (axes.empty())
      for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
    if (target.size() != axes.size())
      return absl::InvalidArgumentError(absl::StrCat(label_, ": shape has ", target.size(), " entries; it needs ",
                                                     axes.size()));
    std::vector<int64_t> out_shape = in;
    std::vector<std::vector<int64_t>> maps(rank);
    for (size_t k = 0; k < axes.size(); ++k) {
      int64_t a = axes[k];
      if (a < -rank || a >= rank)
        return absl::InvalidArgumentError(absl::StrCat(label_, ": axes has ", a, ", out of range for rank ", rank));
      if (a < 0) a += rank;
      if (target[k] < 0 || target[k] > (int64_t{1} << 40))
        return absl::InvalidArgumentError(absl::StrCat(label_, ": shape has ", target[k]));
      out_shape[a] = target[k];
    }
    ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateOutputForOverwrite(0, x->type(), out_shape));
    if (y->num_elements() == 0) return absl::OkStatus();
    for (int64_t a = 0; a < rank; ++a) {
      // Cropping starts (in - out) / 2 in; padding puts the input (out - in) / 2 in.
      const int64_t shift = in[a] >= out_shape[a] ? (in[a] - out_shape[a]) / 2 : -((out_shape[a] - in[a]) / 2);
      maps[a].resize(out_shape[a]);
      for (int64_t o = 0; o < out_shape[a]; ++o) {
        const int64_t i = o + shift;
        maps[a][o] = i >= 0 && i < in[a] ? i : -1;
      }
    }
    return VisitType(AllTypes{}, x->type(), absl::StrCat(label_, ": input_data"), [&](auto tag) -> absl::Status {
      using S = StorageOf<typename decltype(tag)::type>;
      GatherThroughMaps<S>(x->data<S>(), y->data<S>(), in, out_shape, maps, S{}, ctx.threads());
      return absl::OkStatus();
    });
  }

 private:
  std::string label_;
  std::vector<int64_t> axes_;
};

}  // namespace

KernelOr MakeCenterCropPadKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() != 2 || !info.input_present[0] || !info.input_present[1] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": takes input_data and shape and gives one output"));
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, info.attrs().GetInts("axes", {}));
  return std::make_unique<CenterCropPadKernel>(std::move(label), std::move(axes));
}

KernelOr MakePadKernel(const KernelInfo& info) {
  std::string label = NodeLabel(info);
  if (info.num_inputs() < 1 || !info.input_present[0] || info.num_outputs != 1)
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs input data and gives one output"));
  ASSIGN_OR_RETURN(std::string mode_text, info.attrs().GetString("mode", "constant"));
  PadMode mode;
  if (mode_text == "constant") mode = PadMode::kConstant;
  else if (mode_text == "reflect") mode = PadMode::kReflect;
  else if (mode_text == "edge") mode = PadMode::kEdge;
  else if (mode_text == "wrap" && info.opset >= 19) mode = PadMode::kWrap;
  else return absl::InvalidArgumentError(absl::StrCat(label, ": attribute 'mode' has the unknown value ",
                                                    QuoteName(mode_text)));
  std::vector<int64_t> pads;
  float value = 0;
  if (info.opset < 11) {
    ASSIGN_OR_RETURN(pads, info.attrs().GetInts(info.opset < 2 ? "paddings" : "pads"));
    ASSIGN_OR_RETURN(value, info.attrs().GetFloat("value", 0.0f));
  } else if (info.num_inputs() < 2 || !info.input_present[1]) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": needs input pads"));
  }
  return std::make_unique<PadKernel>(std::move(label), info.opset, mode, std::move(pads), value);
}

}  // namespace attune
