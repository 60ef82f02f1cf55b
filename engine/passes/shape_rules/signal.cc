// Shape rules of the signal ops: windows, DFT, STFT and MelWeightMatrix.
#include <optional>
#include <vector>

#include "core/common/status_macros.h"
#include "engine/passes/shape_rules/rules.h"

namespace attune::shape_rules {
namespace {

absl::Status WindowRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t dtype, ctx.attrs().GetInt("output_datatype", 1));
  ctx.output(0).type = static_cast<ElementType>(dtype);
  std::optional<std::vector<int64_t>> size = ctx.InputInts(0);
  ctx.output(0).shape = SymbolicShape{size && size->size() == 1 ? Dim::Known((*size)[0]) : ctx.FreshDim(0, 0)};
  return absl::OkStatus();
}

// DFT: the input's shape with the transformed axis resized (a fresh symbol
// unless every size is known) and the last axis 2, or 1 for a real inverse.
absl::Status DftRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x || x->size() < 2) return absl::OkStatus();
  const int64_t rank = static_cast<int64_t>(x->size());
  ASSIGN_OR_RETURN(int64_t inverse, ctx.attrs().GetInt("inverse", 0));
  ASSIGN_OR_RETURN(int64_t onesided, ctx.attrs().GetInt("onesided", 0));
  std::optional<int64_t> axis;
  if (ctx.opset() < 20) {
    ASSIGN_OR_RETURN(axis, ctx.attrs().GetInt("axis", 1));
  } else if (!ctx.has_input(2)) {
    axis = -2;
  } else if (std::optional<std::vector<int64_t>> a = ctx.InputInts(2); a && a->size() == 1) {
    axis = (*a)[0];
  }
  SymbolicShape shape = *x;
  shape.back() = Dim::Known(inverse != 0 && onesided != 0 ? 1 : 2);
  if (!axis || *axis < -rank || *axis >= rank) {
    for (int64_t i = 0; i + 1 < rank; ++i) shape[i] = ctx.FreshDim(0, static_cast<int>(i));
    ctx.output(0).shape = std::move(shape);
    return absl::OkStatus();
  }
  const int64_t a = (*axis + rank) % rank;
  std::optional<int64_t> n;
  if (ctx.has_input(1)) {
    if (std::optional<std::vector<int64_t>> v = ctx.InputInts(1); v && v->size() == 1) n = (*v)[0];
  } else if ((*x)[a].is_known()) {
    n = inverse != 0 && onesided != 0 ? 2 * ((*x)[a].value() - 1) : (*x)[a].value();
  }
  if (!n) shape[a] = ctx.FreshDim(0, static_cast<int>(a));
  else shape[a] = Dim::Known(onesided != 0 && inverse == 0 ? *n / 2 + 1 : *n);
  ctx.output(0).shape = std::move(shape);
  return absl::OkStatus();
}

// STFT: [batch, frames, bins, 2]; frames and bins are fresh symbols.
absl::Status StftRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const std::optional<SymbolicShape>& x = ctx.input(0).shape;
  if (!x || x->size() != 3) return absl::OkStatus();
  ctx.output(0).shape = SymbolicShape{(*x)[0], ctx.FreshDim(0, 1), ctx.FreshDim(0, 2), Dim::Known(2)};
  return absl::OkStatus();
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] in output_datatype.
absl::Status MelWeightMatrixRule(ShapeContext& ctx) {
  ASSIGN_OR_RETURN(int64_t dtype, ctx.attrs().GetInt("output_datatype", 1));
  ctx.output(0).type = static_cast<ElementType>(dtype);
  std::optional<std::vector<int64_t>> bins = ctx.InputInts(0), dft = ctx.InputInts(1);
  ctx.output(0).shape =
      SymbolicShape{dft && dft->size() == 1 ? Dim::Known((*dft)[0] / 2 + 1) : ctx.FreshDim(0, 0),
                    bins && bins->size() == 1 ? Dim::Known((*bins)[0]) : ctx.FreshDim(0, 1)};
  return absl::OkStatus();
}

}  // namespace

void AddSignalRules(RuleTable& table) {
  for (const char* op : {"HannWindow", "HammingWindow", "BlackmanWindow"}) table.Add(op, WindowRule);
  table.Add("DFT", DftRule);
  table.Add("STFT", StftRule);
  table.Add("MelWeightMatrix", MelWeightMatrixRule);
}

}  // namespace attune::shape_rules
