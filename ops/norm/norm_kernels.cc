// LayerNormalization and RMSNormalization, and their attune.Skip* forms that
// normalise X + Skip: attribute handling and input validation; the
// arithmetic is NormalizeRows.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/norm/kernels.h"
#include "ops/norm/normalize_rows.h"
#include "ops/norm/param_view.h"

namespace attune {
namespace {

bool IsNormType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat64 || t == ElementType::kFloat16 ||
         t == ElementType::kBFloat16;
}

struct NormAttributes {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  ElementType stash_type = ElementType::kFloat32;
};

absl::StatusOr<NormAttributes> ReadAttributes(const std::string& label, const Attributes& attrs) {
  NormAttributes n;
  ASSIGN_OR_RETURN(n.axis, attrs.GetInt("axis", -1));
  ASSIGN_OR_RETURN(n.epsilon, attrs.GetFloat("epsilon", 1e-5f));
  ASSIGN_OR_RETURN(int64_t stash, attrs.GetInt("stash_type", 1));
  if (stash != static_cast<int64_t>(ElementType::kFloat32) && stash != static_cast<int64_t>(ElementType::kFloat64) &&
      stash != static_cast<int64_t>(ElementType::kBFloat16))
    return absl::UnimplementedError(
        absl::StrCat(label, ": stash_type ", stash, " is not supported (1 float32, 11 float64, 16 bfloat16)"));
  n.stash_type = static_cast<ElementType>(stash);
  return n;
}

// Whether `skip` is `x`'s shape with its leading dims 1 or absent (so that
// its elements repeat over x's in blocks), a non-empty block.
bool RepeatsOverLeadingDims(const std::vector<int64_t>& skip, const std::vector<int64_t>& x) {
  if (skip.size() > x.size()) return false;
  const size_t lead = x.size() - skip.size();
  size_t first_full = 0;  // dims of skip from here on equal x's
  for (size_t i = 0; i < skip.size(); ++i)
    if (skip[i] != x[lead + i]) {
      if (skip[i] != 1) return false;
      first_full = i + 1;
    }
  for (size_t i = 0; i < first_full; ++i)
    if (skip[i] != 1) return false;
  return true;
}

class NormKernel final : public Kernel {
 public:
  NormKernel(std::string label, NormAttributes attrs, bool layer_norm, bool skip)
      : label_(std::move(label)), attrs_(attrs), layer_norm_(layer_norm), skip_(skip) {}

  absl::Status Run(KernelContext& ctx) const override {
    // The skip form has Skip as input 1 and the sum as output 1.
    const int p = skip_ ? 1 : 0;
    const Tensor* x = ctx.input(0);
    const Tensor* skip = skip_ ? ctx.input(1) : nullptr;
    const Tensor* scale = ctx.input(1 + p);
    const Tensor* bias = layer_norm_ ? ctx.input(2 + p) : nullptr;
    if (skip_ && (skip == nullptr || x == nullptr))
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs X and Skip"));
    if (x == nullptr || scale == nullptr)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": needs inputs X and Scale"));
    if (!IsNormType(x->type()))
      return absl::UnimplementedError(
          absl::StrCat(label_, ": element type ", ElementTypeName(x->type()), " of X is not supported"));
    for (const Tensor* p : {scale, bias}) {
      if (p != nullptr && p->type() != x->type())
        return absl::InvalidArgumentError(absl::StrCat(label_, ": Scale and B must have X's element type ",
                                                       ElementTypeName(x->type()), ", got ",
                                                       ElementTypeName(p->type())));
    }
    const int64_t rank = x->rank();
    const int64_t axis = attrs_.axis < 0 ? attrs_.axis + rank : attrs_.axis;
    if (axis < 0 || axis >= rank)
      return absl::InvalidArgumentError(
          absl::StrCat(label_, ": axis ", attrs_.axis, " is out of range for X ", ShapeToString(x->shape())));

    if (skip != nullptr && (skip->type() != x->type() || !RepeatsOverLeadingDims(skip->shape(), x->shape())))
      return absl::InvalidArgumentError(absl::StrCat(
          label_, ": Skip ", ElementTypeName(skip->type()), ShapeToString(skip->shape()), " must have X's type and ",
          "shape, or that shape with leading dims of 1: X is ", ElementTypeName(x->type()), ShapeToString(x->shape())));
    const std::vector<int64_t>& shape = x->shape();
    ASSIGN_OR_RETURN(ParamView scale_view, ParamView::Make(label_, "Scale", *scale, shape, static_cast<int>(axis)));
    std::optional<ParamView> bias_view;
    if (bias != nullptr) {
      ASSIGN_OR_RETURN(bias_view, ParamView::Make(label_, "B", *bias, shape, static_cast<int>(axis)));
    }

    NormalizeRowsJob job;
    job.x = x;
    job.skip = skip;
    ASSIGN_OR_RETURN(job.y, ctx.AllocateOutputForOverwrite(0, x->type(), shape));
    if (skip_ && ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
      ASSIGN_OR_RETURN(job.sum, ctx.AllocateOutputForOverwrite(1, x->type(), shape));
    }
    job.rows = 1;
    for (int64_t d = 0; d < axis; ++d) job.rows *= shape[d];
    job.features = 1;
    for (int64_t d = axis; d < rank; ++d) job.features *= shape[d];
    if (skip != nullptr && job.features > 0 && skip->num_elements() % job.features != 0)
      return absl::InvalidArgumentError(absl::StrCat(label_, ": Skip ", ShapeToString(skip->shape()),
                                                     " does not cover the normalized dims of X ",
                                                     ShapeToString(shape), " from axis ", axis));
    job.scale = &scale_view;
    job.bias = bias_view ? &*bias_view : nullptr;
    job.subtract_mean = layer_norm_;
    job.compute_in_double = attrs_.stash_type == ElementType::kFloat64;
    job.epsilon = attrs_.epsilon;
    job.threads = ctx.threads();
    if (layer_norm_ && !skip_) {
      // Mean and InvStdDev keep X's leading dims and 1 for each normalized one.
      std::vector<int64_t> stat_shape(shape.begin(), shape.begin() + axis);
      stat_shape.resize(rank, 1);
      if (ctx.num_outputs() > 1 && ctx.output_wanted(1)) {
        ASSIGN_OR_RETURN(job.mean, ctx.AllocateOutput(1, attrs_.stash_type, stat_shape));
      }
      if (ctx.num_outputs() > 2 && ctx.output_wanted(2)) {
        ASSIGN_OR_RETURN(job.inv_std, ctx.AllocateOutput(2, attrs_.stash_type, stat_shape));
      }
    }
    return NormalizeRows(job);
  }

 private:
  std::string label_;
  NormAttributes attrs_;
  bool layer_norm_;
  bool skip_;
};

absl::StatusOr<std::unique_ptr<Kernel>> MakeNormKernel(const KernelInfo& info, const char* op, bool layer_norm,
                                                       bool skip = false) {
  std::string label = absl::StrCat(op, " ", QuoteName(info.node_name));
  const int needed = skip ? 3 : 2;
  if (info.num_inputs() < needed || !info.input_present[0] || !info.input_present[1] ||
      !info.input_present[needed - 1])
    return absl::InvalidArgumentError(absl::StrCat(label, skip ? ": needs inputs X, Skip and Scale"
                                                               : ": needs inputs X and Scale"));
  const int max_outputs = skip ? 2 : layer_norm ? 3 : 1;
  if (info.num_outputs > max_outputs)
    return absl::InvalidArgumentError(absl::StrCat(label, ": has at most ", max_outputs, " outputs, the node has ",
                                                   info.num_outputs));
  ASSIGN_OR_RETURN(NormAttributes attrs, ReadAttributes(label, info.attrs()));
  return std::make_unique<NormKernel>(std::move(label), attrs, layer_norm, skip);
}

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeLayerNormalizationKernel(const KernelInfo& info) {
  return MakeNormKernel(info, "LayerNormalization", /*layer_norm=*/true);
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeRmsNormalizationKernel(const KernelInfo& info) {
  return MakeNormKernel(info, "RMSNormalization", /*layer_norm=*/false);
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeSkipLayerNormalizationKernel(const KernelInfo& info) {
  return MakeNormKernel(info, "SkipLayerNormalization", /*layer_norm=*/true, /*skip=*/true);
}

absl::StatusOr<std::unique_ptr<Kernel>> MakeSkipRmsNormalizationKernel(const KernelInfo& info) {
  return MakeNormKernel(info, "SkipRMSNormalization", /*layer_norm=*/false, /*skip=*/true);
}

}  // namespace attune
