// ONNX Einsum. Equations that are a permutation of one operand, or a
// (batched) matrix product of two operands, run as a transposing copy or a
// MatMul; everything else goes through the general contraction loop.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "ops/matmul/einsum_equation.h"
#include "ops/matmul/einsum_general.h"
#include "ops/matmul/kernels.h"
#include "ops/matmul/matmul_compute.h"
#include "ops/matmul/matmul_reference.h"
#include "ops/matmul/matmul_shape.h"
#include "ops/matmul/permute.h"

namespace attune {
namespace {

bool HasRepeats(const std::vector<int>& labels) {
  std::vector<int> sorted = labels;
  std::sort(sorted.begin(), sorted.end());
  return std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end();
}

int IndexOf(const std::vector<int>& labels, int label) {
  return static_cast<int>(std::find(labels.begin(), labels.end(), label) - labels.begin());
}

bool Contains(const std::vector<int>& labels, int label) {
  return std::find(labels.begin(), labels.end(), label) != labels.end();
}

// How a two-operand equation maps onto C[batch, M, N] = A[batch, M, K]·B[batch, K, N],
// each of batch/M/N/K being a group of labels.
struct MatMulMapping {
  std::vector<int> batch, m, n, k;
};

std::optional<MatMulMapping> MapToMatMul(const EinsumBinding& b, const std::vector<const Tensor*>& inputs) {
  const std::vector<int>& la = b.input_labels[0];
  const std::vector<int>& lb = b.input_labels[1];
  const std::vector<int>& lo = b.output_labels;
  if (HasRepeats(la) || HasRepeats(lb)) return std::nullopt;
  MatMulMapping map;
  for (int l : lo) {
    const bool in_a = Contains(la, l), in_b = Contains(lb, l);
    (in_a && in_b ? map.batch : in_a ? map.m : map.n).push_back(l);
  }
  for (int l : la) {
    if (Contains(lo, l)) continue;
    if (!Contains(lb, l)) return std::nullopt;  // summed within A alone
    // A contracted label must have the same extent on both sides (no broadcast).
    if (inputs[0]->shape()[IndexOf(la, l)] != inputs[1]->shape()[IndexOf(lb, l)]) return std::nullopt;
    map.k.push_back(l);
  }
  for (int l : lb)
    if (!Contains(lo, l) && !Contains(la, l)) return std::nullopt;  // summed within B alone
  return map;
}

class EinsumKernel final : public Kernel {
 public:
  EinsumKernel(std::string label, EinsumEquation equation) : label_(std::move(label)), equation_(std::move(equation)) {}

  absl::Status Run(KernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    std::vector<std::vector<int64_t>> shapes;
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(label_, ": input ", i, " is missing"));
      if (t->type() != ctx.input(0)->type())
        return absl::InvalidArgumentError(absl::StrCat(label_, ": all inputs must share one element type, input 0 is ",
                                                       ElementTypeName(ctx.input(0)->type()), ", input ", i, " is ",
                                                       ElementTypeName(t->type())));
      inputs.push_back(t);
      shapes.push_back(t->shape());
    }
    if (inputs.empty()) return absl::InvalidArgumentError(absl::StrCat(label_, ": needs at least one input"));
    const ElementType type = inputs[0]->type();
    if (!EinsumGeneralSupports(type))
      return absl::UnimplementedError(absl::StrCat(label_, ": element type ", ElementTypeName(type), " is not supported"));
    ASSIGN_OR_RETURN(EinsumBinding binding, BindEinsum(label_, equation_, shapes));
    ASSIGN_OR_RETURN(Tensor * out, ctx.AllocateOutput(0, type, binding.output_shape));
    if (out->num_elements() == 0) return absl::OkStatus();
    const int threads = ctx.threads();

    if (inputs.size() == 1 && IsPermutation(binding)) {
      std::vector<int> perm;
      for (int l : binding.output_labels) perm.push_back(IndexOf(binding.input_labels[0], l));
      PermuteInto(*inputs[0], perm, *out, threads);
      return absl::OkStatus();
    }
    if (inputs.size() == 2 && ReferenceMatMulSupports(type)) {
      if (std::optional<MatMulMapping> map = MapToMatMul(binding, inputs))
        return RunAsMatMul(ctx, binding, *map, inputs, *out);
    }
    return EinsumGeneral(binding, inputs, *out, threads);
  }

 private:
  static bool IsPermutation(const EinsumBinding& b) {
    const std::vector<int>& in = b.input_labels[0];
    return !HasRepeats(in) && in.size() == b.output_labels.size() &&
           std::all_of(in.begin(), in.end(), [&](int l) { return Contains(b.output_labels, l); });
  }

  absl::Status RunAsMatMul(KernelContext& ctx, const EinsumBinding& b, const MatMulMapping& map,
                           const std::vector<const Tensor*>& inputs, Tensor& out) const {
    const int threads = ctx.threads();
    const int64_t max_bytes = ctx.options().max_tensor_bytes;
    const std::vector<int>& la = b.input_labels[0];
    const std::vector<int>& lb = b.input_labels[1];
    auto extent = [](const Tensor& t, const std::vector<int>& labels, const std::vector<int>& group) {
      int64_t size = 1;
      for (int l : group) size *= t.shape()[IndexOf(labels, l)];
      return size;
    };
    auto order = [](const std::vector<int>& labels, std::initializer_list<const std::vector<int>*> groups) {
      std::vector<int> perm;
      for (const std::vector<int>* g : groups)
        for (int l : *g) perm.push_back(IndexOf(labels, l));
      return perm;
    };

    // A as [batch..., M, K]; copied only when its dims are in another order.
    const std::vector<int> perm_a = order(la, {&map.batch, &map.m, &map.k});
    Tensor a_copy;
    const Tensor* a = inputs[0];
    if (!IsIdentityPermutation(perm_a)) {
      ASSIGN_OR_RETURN(a_copy, Permute(*a, perm_a, max_bytes, threads));
      a = &a_copy;
    }
    // B as [batch..., K, N], or read as [batch..., N, K] transposed (Q·Kᵀ-style).
    const std::vector<int> perm_b = order(lb, {&map.batch, &map.k, &map.n});
    const std::vector<int> perm_bt = order(lb, {&map.batch, &map.n, &map.k});
    bool trans_b = false;
    Tensor b_copy;
    const Tensor* bt = inputs[1];
    if (IsIdentityPermutation(perm_bt) && !IsIdentityPermutation(perm_b)) {
      trans_b = true;
    } else if (!IsIdentityPermutation(perm_b)) {
      ASSIGN_OR_RETURN(b_copy, Permute(*bt, perm_b, max_bytes, threads));
      bt = &b_copy;
    }

    std::vector<int64_t> a_shape, b_shape;
    for (int l : map.batch) {
      a_shape.push_back(inputs[0]->shape()[IndexOf(la, l)]);
      b_shape.push_back(inputs[1]->shape()[IndexOf(lb, l)]);
    }
    const int64_t m = extent(*inputs[0], la, map.m), k = extent(*inputs[0], la, map.k),
                  n = extent(*inputs[1], lb, map.n);
    a_shape.insert(a_shape.end(), {m, k});
    b_shape.insert(b_shape.end(), {k, n});
    ASSIGN_OR_RETURN(MatMulShape shape, PlanMatMul(label_, a_shape, b_shape));

    // The product comes out as [batch..., M..., N...]; permute it into the
    // output's label order unless that is already the order.
    std::vector<int> product_labels = map.batch;
    product_labels.insert(product_labels.end(), map.m.begin(), map.m.end());
    product_labels.insert(product_labels.end(), map.n.begin(), map.n.end());
    std::vector<int> perm_out;
    for (int l : b.output_labels) perm_out.push_back(IndexOf(product_labels, l));
    if (IsIdentityPermutation(perm_out)) return ComputeMatMul(shape, *a, *bt, out, threads, false, trans_b);

    std::vector<int64_t> product_shape;
    for (int l : product_labels) product_shape.push_back(b.label_size[l]);
    ASSIGN_OR_RETURN(Tensor product, ctx.AllocateScratch(out.type(), product_shape));
    RETURN_IF_ERROR(ComputeMatMul(shape, *a, *bt, product, threads, false, trans_b));
    PermuteInto(product, perm_out, out, threads);
    return absl::OkStatus();
  }

  std::string label_;
  EinsumEquation equation_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Kernel>> MakeEinsumKernel(const KernelInfo& info) {
  std::string label = absl::StrCat("Einsum ", QuoteName(info.node_name));
  auto equation_text = info.attrs().GetString("equation");
  if (!equation_text.ok())
    return absl::InvalidArgumentError(absl::StrCat(label, ": ", equation_text.status().message()));
  ASSIGN_OR_RETURN(EinsumEquation equation, ParseEinsumEquation(*equation_text));
  if (static_cast<int>(equation.inputs.size()) != info.num_inputs())
    return absl::InvalidArgumentError(absl::StrCat(label, ": equation '", *equation_text, "' has ",
                                                   equation.inputs.size(), " operands but the node has ",
                                                   info.num_inputs(), " inputs"));
  return std::make_unique<EinsumKernel>(std::move(label), std::move(equation));
}

}  // namespace attune
