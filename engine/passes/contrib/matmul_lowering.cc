// com.microsoft.FusedMatMul: Y = alpha · op(A) · op(B), where op transposes
// the batch axes (transBatchA/B: axis 0 moves to the row position, axes
// 1..r-2 become the batch) and then the last two axes (transA/B); a vector
// is never transposed. Lowered to Transpose + MatMul, or to
// attune.FusedMatMul(trans_b=1) when B only swaps its last two axes (read in
// place, no copy), and a Mul by alpha the product epilogue then folds.
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/contrib/lowerings.h"

namespace attune::contrib {
namespace {

// The permutation op() applies to an operand of rank r, or empty for none.
std::vector<int64_t> OperandPerm(int rank, bool trans, bool trans_batch) {
  if (rank < 2 || (!trans && !(trans_batch && rank >= 3))) return {};
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  if (trans_batch && rank >= 3) {
    for (int i = 0; i < rank - 2; ++i) perm[i] = i + 1;
    perm[rank - 2] = 0;
  }
  if (trans) std::swap(perm[rank - 1], perm[rank - 2]);
  return perm;
}

}  // namespace

absl::Status LowerFusedMatMul(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 2, 2, 1));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"alpha", "transA", "transB", "transBatchA", "transBatchB"}));
  ASSIGN_OR_RETURN(const float alpha, FloatAttr(l, "alpha", 1.0f));
  ASSIGN_OR_RETURN(const int64_t trans_a, IntAttr(l, "transA", 0));
  ASSIGN_OR_RETURN(const int64_t trans_b, IntAttr(l, "transB", 0));
  ASSIGN_OR_RETURN(const int64_t batch_a, IntAttr(l, "transBatchA", 0));
  ASSIGN_OR_RETURN(const int64_t batch_b, IntAttr(l, "transBatchB", 0));
  Value* a = l.input(0);
  Value* b = l.input(1);
  const ElementType type = a->type();
  const int rank_a = Rank(a), rank_b = Rank(b);
  if ((trans_a || batch_a) && rank_a < 0)
    return l.Unsupported(absl::StrCat("input A ('", a->name(), "') has an unknown rank, which transA/transBatchA need"));
  if ((trans_b || batch_b) && rank_b < 0)
    return l.Unsupported(absl::StrCat("input B ('", b->name(), "') has an unknown rank, which transB/transBatchB need"));
  const std::vector<int64_t> perm_a = OperandPerm(rank_a, trans_a != 0, batch_a != 0);
  const std::vector<int64_t> perm_b = OperandPerm(rank_b, trans_b != 0, batch_b != 0);
  if (!perm_a.empty()) {
    Attributes p;
    p.Set("perm", perm_a);
    a = l.Add("Transpose", {a}, std::move(p), type);
  }
  Value* product = nullptr;
  const bool last_two_only = !perm_b.empty() && !(batch_b && rank_b >= 3);
  if (last_two_only) {
    Attributes t;
    t.Set("trans_b", int64_t{1});
    product = l.Add("FusedMatMul", {a, b}, std::move(t), type, "attune");
  } else {
    if (!perm_b.empty()) {
      Attributes p;
      p.Set("perm", perm_b);
      b = l.Add("Transpose", {b}, std::move(p), type);
    }
    product = l.Add("MatMul", {a, b}, {}, type);
  }
  if (alpha != 1.0f) product = l.Add("Mul", {product, l.FloatScalar("alpha", alpha)}, {}, type);
  l.Forward(0, product);
  return l.Finish(context, "FusedMatMul",
                  absl::StrCat("alpha=", alpha, " transA=", trans_a, " transB=", trans_b, " transBatchA=", batch_a,
                               " transBatchB=", batch_b));
}

}  // namespace attune::contrib
