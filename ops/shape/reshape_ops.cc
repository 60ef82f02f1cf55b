// Ops whose output is the input's buffer under another shape: Reshape, Flatten,
// Squeeze, Unsqueeze, Identity and inference-mode Dropout.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"

namespace attune {
namespace {

// Resolves Reshape's requested shape: 0 copies the input dim (unless allowzero),
// one -1 is inferred from the element count.
absl::StatusOr<std::vector<int64_t>> ReshapeTarget(const Tensor& input, const std::vector<int64_t>& requested,
                                                   bool allow_zero) {
  std::vector<int64_t> out(requested);
  int infer_at = -1;
  bool has_zero = false;
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t d = out[i];
    if (d == -1) {
      if (infer_at >= 0) return absl::InvalidArgumentError("Reshape: shape has more than one -1");
      infer_at = static_cast<int>(i);
    } else if (d == 0) {
      has_zero = true;
      if (!allow_zero) {
        if (static_cast<int64_t>(i) >= input.rank())
          return absl::InvalidArgumentError(absl::StrCat("Reshape: shape[", i, "] = 0 copies input dim ", i,
                                                         " but the input ", input.DebugString(), " has rank ",
                                                         input.rank()));
        out[i] = input.shape()[i];
      }
    } else if (d < -1) {
      return absl::InvalidArgumentError(absl::StrCat("Reshape: invalid dim ", d, " in shape ", ShapeToString(requested)));
    }
  }
  if (allow_zero && has_zero && infer_at >= 0)
    return absl::InvalidArgumentError("Reshape: with allowzero=1 the shape cannot hold both 0 and -1");
  if (infer_at >= 0) {
    int64_t known = 1;
    for (size_t i = 0; i < out.size(); ++i)
      if (static_cast<int>(i) != infer_at && __builtin_mul_overflow(known, out[i], &known))
        return absl::InvalidArgumentError(absl::StrCat("Reshape: shape ", ShapeToString(requested), " overflows"));
    if (known == 0 || input.num_elements() % known != 0)
      return absl::InvalidArgumentError(absl::StrCat("Reshape: cannot reshape ", input.DebugString(), " to ",
                                                     ShapeToString(requested)));
    out[infer_at] = input.num_elements() / known;
  }
  auto count = CheckedElementCount(out);
  if (!count.ok() || *count != input.num_elements())
    return absl::InvalidArgumentError(absl::StrCat("Reshape: cannot reshape ", input.DebugString(), " to ",
                                                   ShapeToString(requested)));
  return out;
}

absl::Status SetView(KernelContext& ctx, const Tensor& input, std::vector<int64_t> shape) {
  ASSIGN_OR_RETURN(Tensor out, input.Reshaped(std::move(shape)));
  ctx.SetOutput(0, std::move(out));
  return absl::OkStatus();
}

absl::Status SqueezeRun(KernelContext& ctx, const Tensor& data, const std::optional<std::vector<int64_t>>& axes_in) {
  std::vector<int64_t> out;
  if (!axes_in.has_value() || axes_in->empty()) {
    for (int64_t d : data.shape())
      if (d != 1) out.push_back(d);
    return SetView(ctx, data, std::move(out));
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizeAxes(*axes_in, data.rank(), "Squeeze"));
  for (int64_t a : axes)
    if (data.shape()[a] != 1)
      return absl::InvalidArgumentError(absl::StrCat("Squeeze: axis ", a, " of input ", data.DebugString(),
                                                     " has size ", data.shape()[a], ", not 1"));
  for (int64_t d = 0; d < data.rank(); ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) out.push_back(data.shape()[d]);
  return SetView(ctx, data, std::move(out));
}

absl::Status UnsqueezeRun(KernelContext& ctx, const Tensor& data, const std::vector<int64_t>& axes_in) {
  const int64_t out_rank = data.rank() + static_cast<int64_t>(axes_in.size());
  ASSIGN_OR_RETURN(std::vector<int64_t> axes, NormalizeAxes(axes_in, out_rank, "Unsqueeze"));
  std::vector<int64_t> out(out_rank, 1);
  size_t next = 0;
  for (int64_t d = 0; d < out_rank; ++d)
    if (std::find(axes.begin(), axes.end(), d) == axes.end()) out[d] = data.shape()[next++];
  return SetView(ctx, data, std::move(out));
}

}  // namespace

KernelOr MakeReshapeKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t allow_zero, info.attrs().GetInt("allowzero", 0));
  if (info.opset < 5) {  // Reshape-1: the shape is an attribute
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, info.attrs().GetInts("shape"));
    return MakeKernel([shape](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Reshape", "data"));
      ASSIGN_OR_RETURN(std::vector<int64_t> out, ReshapeTarget(*data, shape, false));
      return SetView(ctx, *data, std::move(out));
    });
  }
  return MakeKernel([allow_zero](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Reshape", "data"));
    ASSIGN_OR_RETURN(const Tensor* shape_t, RequiredInput(ctx, 1, "Reshape", "shape"));
    ASSIGN_OR_RETURN(std::vector<int64_t> shape, ReadIndexVector(*shape_t, "Reshape: input 'shape'", IndexTypes::kInt64Only));
    ASSIGN_OR_RETURN(std::vector<int64_t> out, ReshapeTarget(*data, shape, allow_zero != 0));
    return SetView(ctx, *data, std::move(out));
  });
}

KernelOr MakeFlattenKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t axis_attr, info.attrs().GetInt("axis", 1));
  return MakeKernel([axis_attr](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Flatten", "input"));
    const int64_t rank = data->rank();
    // Flatten's axis lies in [-rank, rank]: it may equal the rank (everything in the outer dim).
    if (axis_attr < -rank || axis_attr > rank)
      return absl::InvalidArgumentError(
          absl::StrCat("Flatten: axis ", axis_attr, " is out of range for input ", data->DebugString()));
    const int64_t axis = axis_attr < 0 ? axis_attr + rank : axis_attr;
    const int64_t outer = axis == 0 ? 1 : DimProduct(data->shape(), 0, axis);
    const int64_t inner = DimProduct(data->shape(), axis, rank);
    if (outer == INT64_MAX || inner == INT64_MAX)
      return absl::InvalidArgumentError(absl::StrCat("Flatten: dims of ", data->DebugString(), " overflow"));
    return SetView(ctx, *data, {outer, inner});
  });
}

KernelOr MakeSqueezeKernel(const KernelInfo& info) {
  if (info.opset < 13) {
    std::optional<std::vector<int64_t>> axes;
    if (info.attrs().Has("axes")) {
      ASSIGN_OR_RETURN(axes, info.attrs().GetInts("axes"));
    }
    return MakeKernel([axes](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Squeeze", "data"));
      return SqueezeRun(ctx, *data, axes);
    });
  }
  return MakeKernel([](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Squeeze", "data"));
    std::optional<std::vector<int64_t>> axes;
    if (const Tensor* t = ctx.input(1); t != nullptr && !t->empty()) {
      ASSIGN_OR_RETURN(axes, ReadIndexVector(*t, "Squeeze: input 'axes'", IndexTypes::kInt64Only));
    }
    return SqueezeRun(ctx, *data, axes);
  });
}

KernelOr MakeUnsqueezeKernel(const KernelInfo& info) {
  if (info.opset < 13) {
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, info.attrs().GetInts("axes"));
    return MakeKernel([axes](KernelContext& ctx) -> absl::Status {
      ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Unsqueeze", "data"));
      return UnsqueezeRun(ctx, *data, axes);
    });
  }
  return MakeKernel([](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Unsqueeze", "data"));
    ASSIGN_OR_RETURN(const Tensor* axes_t, RequiredInput(ctx, 1, "Unsqueeze", "axes"));
    ASSIGN_OR_RETURN(std::vector<int64_t> axes, ReadIndexValues(*axes_t, "Unsqueeze: input 'axes'", IndexTypes::kInt64Only));
    if (axes_t->rank() > 1)
      return absl::InvalidArgumentError(absl::StrCat("Unsqueeze: input 'axes' must be 0-D or 1-D, got ",
                                                     axes_t->DebugString()));
    return UnsqueezeRun(ctx, *data, axes);
  });
}

KernelOr MakeIdentityKernel(const KernelInfo& info) {
  return MakeKernel([](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Identity", "input"));
    ctx.SetOutput(0, *data);
    return absl::OkStatus();
  });
}

namespace {

// Dropout's mask when nothing is dropped: bool true from opset 10, a tensor of
// ones of the data's type before (Dropout-7 typed the mask like the data).
absl::Status WriteKeepAllMask(KernelContext& ctx, const Tensor& data, int opset) {
  const ElementType type = opset >= 10 ? ElementType::kBool : data.type();
  ASSIGN_OR_RETURN(Tensor * mask, ctx.AllocateOutput(1, type, data.shape()));
  const int64_t n = mask->num_elements();
  switch (type) {
    case ElementType::kBool: std::fill_n(mask->data<bool>(), n, true); break;
    case ElementType::kFloat32: std::fill_n(mask->data<float>(), n, 1.0f); break;
    case ElementType::kFloat64: std::fill_n(mask->data<double>(), n, 1.0); break;
    case ElementType::kFloat16: std::fill_n(mask->data<Float16>(), n, FloatToHalf(1.0f)); break;
    case ElementType::kBFloat16: std::fill_n(mask->data<BFloat16>(), n, FloatToBFloat16(1.0f)); break;
    default:
      return absl::InvalidArgumentError(absl::StrCat("Dropout: unsupported data type ", data.DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> ReadTrainingMode(const KernelContext& ctx) {
  const Tensor* t = ctx.input(2);
  if (t == nullptr || t->empty()) return false;
  if (t->type() != ElementType::kBool || t->num_elements() != 1)
    return absl::InvalidArgumentError(
        absl::StrCat("Dropout: input 'training_mode' must be a bool scalar, got ", t->DebugString()));
  return *t->data<bool>();
}

absl::StatusOr<double> ReadRatio(const KernelContext& ctx) {
  const Tensor* t = ctx.input(1);
  if (t == nullptr || t->empty()) return 0.5;
  if (t->num_elements() != 1)
    return absl::InvalidArgumentError(absl::StrCat("Dropout: input 'ratio' must be a scalar, got ", t->DebugString()));
  switch (t->type()) {
    case ElementType::kFloat32: return *t->data<float>();
    case ElementType::kFloat64: return *t->data<double>();
    case ElementType::kFloat16: return HalfToFloat(*t->data<Float16>());
    case ElementType::kBFloat16: return BFloat16ToFloat(*t->data<BFloat16>());
    default:
      return absl::InvalidArgumentError(absl::StrCat("Dropout: input 'ratio' must be floating point, got ",
                                                     t->DebugString()));
  }
}

}  // namespace

KernelOr MakeDropoutKernel(const KernelInfo& info) {
  const int opset = info.opset;
  return MakeKernel([opset](KernelContext& ctx) -> absl::Status {
    ASSIGN_OR_RETURN(const Tensor* data, RequiredInput(ctx, 0, "Dropout", "data"));
    if (opset >= 12) {
      ASSIGN_OR_RETURN(const bool training, ReadTrainingMode(ctx));
      ASSIGN_OR_RETURN(const double ratio, ReadRatio(ctx));
      if (!(ratio >= 0.0 && ratio < 1.0))
        return absl::InvalidArgumentError(absl::StrCat("Dropout: ratio ", ratio, " is outside [0, 1)"));
      // Training-mode dropout with a non-zero ratio draws random numbers: an
      // inference engine has no reproducible answer to give.
      if (training && ratio != 0.0)
        return absl::UnimplementedError("Dropout: training_mode=true with a non-zero ratio is not supported");
    }
    ctx.SetOutput(0, *data);
    if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) return WriteKeepAllMask(ctx, *data, opset);
    return absl::OkStatus();
  });
}

}  // namespace attune
