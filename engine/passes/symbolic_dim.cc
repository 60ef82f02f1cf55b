#include "engine/passes/symbolic_dim.h"

namespace attune {
namespace {

template <typename Op>
Dim Combine(const Dim& a, const Dim& b, Op op) {
  auto ea = a.AsExpr();
  auto eb = b.AsExpr();
  if (!ea || !eb) return Dim();
  auto r = op(*ea, *eb);
  return r ? Dim::FromExpr(*std::move(r)) : Dim();
}

}  // namespace

Dim DimAdd(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::Add); }
Dim DimSub(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::Sub); }
Dim DimMul(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::Mul); }
Dim DimDivExact(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::DivExact); }

Dim DimMin(const Dim& a, const Dim& b) {
  if (a == b) return a;
  return Combine(a, b, [](const DimExpr& x, const DimExpr& y) { return std::optional<DimExpr>(DimExpr::Min(x, y)); });
}

bool BroadcastsInto(const Dim& a, const Dim& b) {
  if (a == b) return true;
  const DimAtom* atom = a.expr() != nullptr ? a.expr()->single_atom() : nullptr;
  auto wanted = b.AsExpr();
  if (atom == nullptr || !atom->is_min() || !wanted) return false;
  // a = min(b, C) <= b, and a = 0 only when b = 0 (C >= 1): so a is 1 or b
  // in any valid broadcast, and the result is b.
  auto is_b_and_number = [&](const DimExpr& x, const DimExpr& y) {
    return x == *wanted && y.is_constant() && y.constant_value() >= 1;
  };
  return is_b_and_number(atom->min_first(), atom->min_second()) ||
         is_b_and_number(atom->min_second(), atom->min_first());
}

Dim DimProduct(const std::vector<Dim>& dims) {
  std::optional<DimExpr> acc = DimExpr::Constant(1);
  for (const Dim& d : dims) {
    auto e = d.AsExpr();
    if (!e) return Dim();
    acc = DimExpr::Mul(*acc, *e);
    if (!acc) return Dim();
  }
  return Dim::FromExpr(*std::move(acc));
}

}  // namespace attune
