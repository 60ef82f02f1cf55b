// Arithmetic on symbolic dimensions: dims as the polynomials they hold
// (core/ir/dim_expr.h), so that shape rules can add, multiply, divide and
// take minimums of dims and get back dims equal by meaning, not spelling.
#pragma once

#include <vector>

#include "core/ir/dim.h"

namespace attune {

/// Product of dims as a Dim; unknown if any dim is unknown or on overflow.
Dim DimProduct(const std::vector<Dim>& dims);
/// a + b, a - b, a * b as Dims (unknown when an operand is unknown or on overflow).
Dim DimAdd(const Dim& a, const Dim& b);
Dim DimSub(const Dim& a, const Dim& b);
Dim DimMul(const Dim& a, const Dim& b);
/// a / b when provably exact, else unknown.
Dim DimDivExact(const Dim& a, const Dim& b);
/// min(a, b): a number when both are, `a` when they are equal, else the
/// symbol min(x,y) with its arguments in a canonical order, so that the same
/// minimum computed twice is the same symbol.
Dim DimMin(const Dim& a, const Dim& b);
/// True when, in any run where `a` and `b` broadcast against each other, the
/// result is `b`: a == b, or a is min(b, C) with C a number >= 1 (a slice of
/// a constant buffer by a length, as in mask[:T, :T] against T).
bool BroadcastsInto(const Dim& a, const Dim& b);

}  // namespace attune
