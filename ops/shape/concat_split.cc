// Concat and Split: block copies along one axis, [outer, axis * inner] per tensor.
#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "ops/shape/axis_util.h"
#include "ops/shape/shape_kernels.h"
#include "ops/shape/strided_copy.h"

namespace attune {
namespace {

absl::Status ConcatRun(KernelContext& ctx, int64_t axis_attr) {
  std::vector<const Tensor*> inputs;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    ASSIGN_OR_RETURN(const Tensor* t, RequiredInput(ctx, i, "Concat", "inputs"));
    inputs.push_back(t);
  }
  if (inputs.empty()) return absl::InvalidArgumentError("Concat: no inputs");
  const Tensor& first = *inputs[0];
  const int64_t rank = first.rank();
  if (rank == 0) return absl::InvalidArgumentError("Concat: inputs must have rank >= 1");
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_attr, rank, "Concat"));
  std::vector<int64_t> out_shape = first.shape();
  out_shape[axis] = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = *inputs[i];
    bool compatible = t.type() == first.type() && t.rank() == rank;
    for (int64_t d = 0; compatible && d < rank; ++d) compatible = d == axis || t.shape()[d] == first.shape()[d];
    if (!compatible)
      return absl::InvalidArgumentError(absl::StrCat("Concat: input ", i, " ", t.DebugString(),
                                                     " does not match input 0 ", first.DebugString(), " on axis ",
                                                     axis));
    if (__builtin_add_overflow(out_shape[axis], t.shape()[axis], &out_shape[axis]))
      return absl::InvalidArgumentError("Concat: output dim overflows");
  }
  ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(0, first.type(), out_shape));
  if (out->num_elements() == 0) return absl::OkStatus();
  const size_t elem = ElementSize(first.type());
  const int64_t outer = DimProduct(out_shape, 0, axis);
  const int64_t inner_bytes = DimProduct(out_shape, axis + 1, rank) * static_cast<int64_t>(elem);
  const int64_t out_row = out_shape[axis] * inner_bytes;
  std::vector<int64_t> offsets, sizes;  // per input: byte offset in an output row, bytes per row
  int64_t offset = 0;
  for (const Tensor* t : inputs) {
    offsets.push_back(offset);
    sizes.push_back(t->shape()[axis] * inner_bytes);
    offset += sizes.back();
  }
  char* dst = static_cast<char*>(out->raw_data());
  const int threads = ThreadsForBytes(static_cast<int64_t>(out->byte_size()), ctx.threads());
  const int64_t n_inputs = static_cast<int64_t>(inputs.size());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
  for (int64_t w = 0; w < outer * n_inputs; ++w) {
    const int64_t row = w / n_inputs, i = w % n_inputs;
    if (sizes[i] == 0) continue;
    std::memcpy(dst + row * out_row + offsets[i], static_cast<const char*>(inputs[i]->raw_data()) + row * sizes[i],
                sizes[i]);
  }
  return absl::OkStatus();
}

// Split sizes from an explicit list, from num_outputs (last chunk smaller) or equal parts.
absl::StatusOr<std::vector<int64_t>> SplitSizes(int64_t dim, int num_outputs, const std::optional<std::vector<int64_t>>& split,
                                                int64_t num_outputs_attr) {
  if (num_outputs <= 0) return absl::InvalidArgumentError("Split: node has no outputs");
  if (split.has_value()) {
    if (num_outputs_attr > 0)
      return absl::InvalidArgumentError("Split: input 'split' and attribute 'num_outputs' are both given");
    if (static_cast<int>(split->size()) != num_outputs)
      return absl::InvalidArgumentError(absl::StrCat("Split: 'split' has ", split->size(), " entries for ",
                                                     num_outputs, " outputs"));
    int64_t total = 0;
    for (int64_t s : *split) {
      if (s < 0 || __builtin_add_overflow(total, s, &total))
        return absl::InvalidArgumentError(absl::StrCat("Split: invalid split [", absl::StrJoin(*split, ", "), "]"));
    }
    if (total != dim)
      return absl::InvalidArgumentError(absl::StrCat("Split: split [", absl::StrJoin(*split, ", "), "] sums to ",
                                                     total, ", but the axis has size ", dim));
    return *split;
  }
  std::vector<int64_t> sizes(num_outputs);
  if (num_outputs_attr > 0) {
    if (num_outputs_attr != num_outputs)
      return absl::InvalidArgumentError(absl::StrCat("Split: num_outputs=", num_outputs_attr, " but the node has ",
                                                     num_outputs, " outputs"));
    const int64_t chunk = dim / num_outputs + (dim % num_outputs != 0);
    for (int i = 0; i < num_outputs; ++i) sizes[i] = std::clamp<int64_t>(dim - i * chunk, 0, chunk);
    return sizes;
  }
  if (dim % num_outputs != 0)
    return absl::InvalidArgumentError(
        absl::StrCat("Split: axis of size ", dim, " cannot be split equally into ", num_outputs, " outputs"));
  std::fill(sizes.begin(), sizes.end(), dim / num_outputs);
  return sizes;
}

absl::Status SplitRun(KernelContext& ctx, int64_t axis_attr, const std::optional<std::vector<int64_t>>& split,
                      int64_t num_outputs_attr) {
  ASSIGN_OR_RETURN(const Tensor* input, RequiredInput(ctx, 0, "Split", "input"));
  const int64_t rank = input->rank();
  ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_attr, rank, "Split"));
  ASSIGN_OR_RETURN(std::vector<int64_t> sizes,
                   SplitSizes(input->shape()[axis], ctx.num_outputs(), split, num_outputs_attr));
  if (input->num_elements() == 0) {  // only shapes to produce; the products below could overflow
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      std::vector<int64_t> shape = input->shape();
      shape[axis] = sizes[i];
      if (ctx.output_wanted(i)) RETURN_IF_ERROR(ctx.AllocateOutput(i, input->type(), shape).status());
    }
    return absl::OkStatus();
  }
  const size_t elem = ElementSize(input->type());
  const int64_t outer = DimProduct(input->shape(), 0, axis);
  const int64_t inner_bytes = DimProduct(input->shape(), axis + 1, rank) * static_cast<int64_t>(elem);
  const int64_t in_row = input->shape()[axis] * inner_bytes;
  const char* src = static_cast<const char*>(input->raw_data());
  int64_t offset = 0;
  for (int i = 0; i < ctx.num_outputs(); ++i) {
    std::vector<int64_t> shape = input->shape();
    shape[axis] = sizes[i];
    const int64_t row = sizes[i] * inner_bytes, row_offset = offset;
    offset += row;
    if (!ctx.output_wanted(i)) continue;
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutputForOverwrite(i, input->type(), shape));
    if (out->num_elements() == 0) continue;
    char* dst = static_cast<char*>(out->raw_data());
    const int threads = ThreadsForBytes(static_cast<int64_t>(out->byte_size()), ctx.threads());
#pragma omp parallel for num_threads(threads) schedule(static) if (threads > 1)
    for (int64_t r = 0; r < outer; ++r) std::memcpy(dst + r * row, src + r * in_row + row_offset, row);
  }
  return absl::OkStatus();
}

}  // namespace

KernelOr MakeConcatKernel(const KernelInfo& info) {
  // Concat-1 defaulted the axis to 1; from opset 4 it is required.
  ASSIGN_OR_RETURN(const int64_t axis, info.opset < 4 ? info.attrs().GetInt("axis", 1) : info.attrs().GetInt("axis"));
  return MakeKernel([axis](KernelContext& ctx) { return ConcatRun(ctx, axis); });
}

KernelOr MakeSplitKernel(const KernelInfo& info) {
  ASSIGN_OR_RETURN(const int64_t axis, info.attrs().GetInt("axis", 0));
  ASSIGN_OR_RETURN(const int64_t num_outputs_attr, info.attrs().GetInt("num_outputs", 0));
  if (info.opset < 13) {  // the sizes are an attribute
    std::optional<std::vector<int64_t>> split;
    if (info.attrs().Has("split")) {
      ASSIGN_OR_RETURN(split, info.attrs().GetInts("split"));
    }
    return MakeKernel([axis, split](KernelContext& ctx) { return SplitRun(ctx, axis, split, 0); });
  }
  if (info.opset < 18 && num_outputs_attr != 0)
    return absl::InvalidArgumentError("Split: attribute num_outputs exists only from opset 18");
  if (info.opset >= 18 && info.attrs().Has("num_outputs") && num_outputs_attr < 1)
    return absl::InvalidArgumentError(absl::StrCat("Split: num_outputs must be >= 1, got ", num_outputs_attr));
  return MakeKernel([axis, num_outputs_attr](KernelContext& ctx) -> absl::Status {
    std::optional<std::vector<int64_t>> split;
    // An empty 'split' tensor is what some exporters write for "not given".
    if (const Tensor* t = ctx.input(1); t != nullptr && !t->empty() && t->num_elements() > 0) {
      ASSIGN_OR_RETURN(split, ReadIndexVector(*t, "Split: input 'split'", IndexTypes::kInt64Only));
    }
    return SplitRun(ctx, axis, split, num_outputs_attr);
  });
}

}  // namespace attune
