#include "engine/passes/op_fusion/algebra_patterns.h"

#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "engine/pattern/constants.h"

namespace attune::op_fusion {
namespace {

using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

bool IsFloat(ElementType type) {
  return type == ElementType::kFloat32 || type == ElementType::kFloat16 || type == ElementType::kFloat64 ||
         type == ElementType::kBFloat16;
}

// The one number a constant holds, or why it is not one float number.
std::optional<std::string> OneFloat(const Tensor& t, const std::string& role, double* value) {
  if (t.num_elements() != 1) return absl::StrCat(role, " holds ", t.num_elements(), " elements, not one number");
  if (!IsFloat(t.type())) return absl::StrCat(role, " is ", ElementTypeName(t.type()), ", not a float");
  *value = *pattern::ElementAsDouble(t, 0);
  return std::nullopt;
}

}  // namespace

bool StandsFor(double value, double exact, ElementType type) {
  if (std::fabs(value - exact) <= kConstantTolerance * std::fabs(exact)) return true;
  if (type != ElementType::kFloat16 || exact == 0.0) return false;
  // float16 has 11 significant bits: its spacing at exact is 2^(e - 10).
  const double half_ulp = std::ldexp(1.0, std::ilogb(exact) - 11);
  return std::fabs(value - exact) <= half_ulp;
}

Pattern Near(const std::string& role, double exact) {
  return pattern::ConstantWhere(absl::StrCat("constant ", role), [role, exact](const Tensor& t) {
    double v = 0;
    if (auto why = OneFloat(t, role, &v)) return why;
    if (StandsFor(v, exact, t.type())) return std::optional<std::string>();
    const std::string value = role == absl::StrCat(exact) ? "" : absl::StrCat(exact, ", ");
    return std::optional<std::string>(absl::StrCat("constant ", v, " where the formula has ", role, " (", value,
                                                   "within a relative ", kConstantTolerance, ")"));
  });
}

Pattern Exactly(double value) {
  const std::string role = absl::StrCat(value);
  return pattern::ConstantWhere(absl::StrCat("constant ", role), [role, value](const Tensor& t) {
    const std::optional<double> v = t.num_elements() == 1 ? pattern::ElementAsDouble(t, 0) : std::nullopt;
    if (!v) return std::optional<std::string>(absl::StrCat("constant where the formula has exactly ", role,
                                                           " is not one number"));
    if (*v == value) return std::optional<std::string>();
    return std::optional<std::string>(absl::StrCat("constant ", *v, " where the formula has exactly ", role));
  });
}

Pattern AnyScalar(const std::string& role) {
  return pattern::ConstantWhere(absl::StrCat("constant ", role), [role](const Tensor& t) {
    double v = 0;
    if (auto why = OneFloat(t, role, &v)) return why;
    if (!std::isfinite(v)) return std::optional<std::string>(absl::StrCat(role, " is ", v, ", not finite"));
    return std::optional<std::string>();
  });
}

Pattern Scaled(const Pattern& p, const std::string& role, double exact) {
  // The divisor's name: "1/sqrt(2)" divides by "sqrt(2)", "0.5" by "1/0.5".
  const std::string divisor = role.rfind("1/", 0) == 0 ? role.substr(2) : absl::StrCat("1/", role);
  return OneOf({Op("Mul").Commutative().Inputs({p, Near(role, exact)}),
                Op("Div").Inputs({p, Near(divisor, 1.0 / exact)})});
}

Pattern ScaledProduct(const Pattern& a, const Pattern& b, const std::string& role, double exact) {
  return OneOf({Scaled(Op("Mul").Commutative().Inputs({a, b}), role, exact),
                Op("Mul").Commutative().Inputs({Scaled(a, role, exact), b}),
                Op("Mul").Commutative().Inputs({a, Scaled(b, role, exact)})});
}

Pattern Square(const Pattern& x) { return OneOf({Op("Mul").Inputs({x, x}), Op("Pow").Inputs({x, Exactly(2)})}); }

Pattern Cube(const Pattern& x) {
  return OneOf({Op("Pow").Inputs({x, Exactly(3)}), Op("Mul").Commutative().Inputs({x, Square(x)})});
}

Pattern ScaledSquare(const Pattern& x, const std::string& role, double exact) {
  return OneOf({ScaledProduct(x, x, role, exact), Scaled(Op("Pow").Inputs({x, Exactly(2)}), role, exact)});
}

Pattern ScaledCube(const Pattern& x, const std::string& role, double exact) {
  return OneOf({Scaled(Cube(x), role, exact), Op("Mul").Commutative().Inputs({x, ScaledSquare(x, role, exact)}),
                Op("Mul").Commutative().Inputs({Scaled(x, role, exact), Square(x)})});
}

}  // namespace attune::op_fusion
