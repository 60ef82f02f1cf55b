// Pattern pieces for the arithmetic exporters write around activations and
// norms: constants checked by value, products with a constant factor in any
// association (c·p, p·c, p / (1/c)), and powers written as Pow or as
// repeated Mul. Each piece lists every form it accepts, so a rule is the
// formula it proves, not one exporter's node sequence.
#pragma once

#include <string>

#include "engine/pattern/pattern.h"

namespace attune::op_fusion {

/// Relative distance a constant may have from the exact value of the formula.
inline constexpr double kConstantTolerance = 1e-6;

/// Whether a constant of element type `type` holding `value` stands for
/// `exact`: within kConstantTolerance relative, or (for a float16 constant,
/// which cannot come that close) within half a float16 ulp.
bool StandsFor(double value, double exact, ElementType type);

/// A one-element float constant that stands for `exact`; `role` names it in
/// the reason for a miss ("0.044715", "1/2").
pattern::Pattern Near(const std::string& role, double exact);
/// A one-element constant equal to `value` exactly (exponents: Pow(x, 3) is
/// x·x·x only for exactly 3).
pattern::Pattern Exactly(double value);
/// Any one-element finite float constant; `role` names it in a miss.
pattern::Pattern AnyScalar(const std::string& role);

/// p·c for the constant c standing for `exact`: Mul(p, c) either way round,
/// or Div(p, 1/c).
pattern::Pattern Scaled(const pattern::Pattern& p, const std::string& role, double exact);
/// a·b·c for the constant c standing for `exact`, in any association:
/// (a·b)·c, (a·c)·b, a·(b·c), with Scaled's forms of each product by c.
pattern::Pattern ScaledProduct(const pattern::Pattern& a, const pattern::Pattern& b, const std::string& role,
                               double exact);
/// x² as Mul(x, x) or Pow(x, 2).
pattern::Pattern Square(const pattern::Pattern& x);
/// x³ as Pow(x, 3), x·(x·x) or (x·x)·x.
pattern::Pattern Cube(const pattern::Pattern& x);
/// c·x²: c·(x·x), (c·x)·x, c·Pow(x, 2).
pattern::Pattern ScaledSquare(const pattern::Pattern& x, const std::string& role, double exact);
/// c·x³: c·x³ (any form of x³), x·(c·x²), (c·x)·(x·x).
pattern::Pattern ScaledCube(const pattern::Pattern& x, const std::string& role, double exact);

}  // namespace attune::op_fusion
