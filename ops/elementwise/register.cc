// The element-wise family: which op and opset range each kernel implements.
// Ranges start at the first opset whose meaning the kernel implements in full;
// later versions that only add types (bfloat16, int8, ...) share the kernel.
#include "ops/elementwise/elementwise_chain.h"
#include "ops/elementwise/kernels.h"
#include "ops/registry.h"

namespace attune {

void RegisterElementwiseKernels(KernelRegistry& registry) {
  using namespace elementwise;  // NOLINT: this file is the family's table

  // Binary arithmetic: numpy broadcasting from opset 7 (6 and older had the
  // legacy broadcast/axis attributes).
  registry.Register("", "Add", 7, ArithmeticKernel(ArithmeticOp::kAdd));
  registry.Register("", "Sub", 7, ArithmeticKernel(ArithmeticOp::kSub));
  registry.Register("", "Mul", 7, ArithmeticKernel(ArithmeticOp::kMul));
  registry.Register("", "Div", 7, ArithmeticKernel(ArithmeticOp::kDiv));
  registry.Register("", "Pow", 7, PowKernel());  // 12+ allows mixed base/exponent types
  registry.Register("", "Mod", 10, ModKernel());

  // Variadic; opset 6 required equal shapes, which broadcasting also covers.
  registry.Register("", "Min", 6, VariadicKernel(VariadicOp::kMin));
  registry.Register("", "Max", 6, VariadicKernel(VariadicOp::kMax));
  registry.Register("", "Sum", 6, VariadicKernel(VariadicOp::kSum));
  registry.Register("", "Mean", 6, VariadicKernel(VariadicOp::kMean));

  registry.Register("", "Equal", 7, ComparisonKernel(ComparisonOp::kEqual));
  registry.Register("", "Less", 7, ComparisonKernel(ComparisonOp::kLess));
  registry.Register("", "Greater", 7, ComparisonKernel(ComparisonOp::kGreater));
  registry.Register("", "LessOrEqual", 12, ComparisonKernel(ComparisonOp::kLessOrEqual));
  registry.Register("", "GreaterOrEqual", 12, ComparisonKernel(ComparisonOp::kGreaterOrEqual));

  registry.Register("", "And", 7, LogicalKernel(LogicalOp::kAnd));
  registry.Register("", "Or", 7, LogicalKernel(LogicalOp::kOr));
  registry.Register("", "Xor", 7, LogicalKernel(LogicalOp::kXor));
  registry.Register("", "Not", 1, NotKernel());
  registry.Register("", "BitShift", 11, BitShiftKernel());
  registry.Register("", "BitwiseAnd", 18, LogicalKernel(LogicalOp::kBitwiseAnd));
  registry.Register("", "BitwiseOr", 18, LogicalKernel(LogicalOp::kBitwiseOr));
  registry.Register("", "BitwiseXor", 18, LogicalKernel(LogicalOp::kBitwiseXor));
  registry.Register("", "BitwiseNot", 18, BitwiseNotKernel());

  // Unary math; opset 1 versions carried the legacy consumed_inputs attribute.
  registry.Register("", "Abs", 6, UnaryMathKernel(UnaryMathOp::kAbs));
  registry.Register("", "Neg", 6, UnaryMathKernel(UnaryMathOp::kNeg));
  registry.Register("", "Sign", 9, UnaryMathKernel(UnaryMathOp::kSign));
  registry.Register("", "Reciprocal", 6, UnaryMathKernel(UnaryMathOp::kReciprocal));
  registry.Register("", "Sqrt", 6, UnaryMathKernel(UnaryMathOp::kSqrt));
  registry.Register("", "Exp", 6, UnaryMathKernel(UnaryMathOp::kExp));
  registry.Register("", "Log", 6, UnaryMathKernel(UnaryMathOp::kLog));
  registry.Register("", "Erf", 9, UnaryMathKernel(UnaryMathOp::kErf));
  registry.Register("", "Floor", 6, UnaryMathKernel(UnaryMathOp::kFloor));
  registry.Register("", "Ceil", 6, UnaryMathKernel(UnaryMathOp::kCeil));
  registry.Register("", "Round", 11, UnaryMathKernel(UnaryMathOp::kRound));
  registry.Register("", "Sin", 7, UnaryMathKernel(UnaryMathOp::kSin));
  registry.Register("", "Cos", 7, UnaryMathKernel(UnaryMathOp::kCos));
  registry.Register("", "Tan", 7, UnaryMathKernel(UnaryMathOp::kTan));
  registry.Register("", "Asin", 7, UnaryMathKernel(UnaryMathOp::kAsin));
  registry.Register("", "Acos", 7, UnaryMathKernel(UnaryMathOp::kAcos));
  registry.Register("", "Atan", 7, UnaryMathKernel(UnaryMathOp::kAtan));
  registry.Register("", "Sinh", 9, UnaryMathKernel(UnaryMathOp::kSinh));
  registry.Register("", "Cosh", 9, UnaryMathKernel(UnaryMathOp::kCosh));
  registry.Register("", "Asinh", 9, UnaryMathKernel(UnaryMathOp::kAsinh));
  registry.Register("", "Acosh", 9, UnaryMathKernel(UnaryMathOp::kAcosh));
  registry.Register("", "Atanh", 9, UnaryMathKernel(UnaryMathOp::kAtanh));
  registry.Register("", "IsNaN", 9, UnaryMathKernel(UnaryMathOp::kIsNaN));
  registry.Register("", "IsInf", 10, UnaryMathKernel(UnaryMathOp::kIsInf));

  registry.Register("", "Relu", 6, ActivationKernel(ActivationOp::kRelu));
  registry.Register("attune", "ElementwiseChain", 1, ElementwiseChainKernel());
  registry.Register("", "LeakyRelu", 6, ActivationKernel(ActivationOp::kLeakyRelu));
  registry.Register("", "Sigmoid", 6, ActivationKernel(ActivationOp::kSigmoid));
  registry.Register("", "Tanh", 6, ActivationKernel(ActivationOp::kTanh));
  // Gelu (opset 20) and Swish (24) at every opset: the element-wise fusion
  // writes them into graphs of older opsets, and no earlier version of
  // either op exists whose meaning they could be mistaken for.
  registry.Register("", "Gelu", 1, ActivationKernel(ActivationOp::kGelu));
  registry.Register("", "Swish", 1, SwishKernel());
  registry.Register("", "Softplus", 1, ActivationKernel(ActivationOp::kSoftplus));
  registry.Register("", "Softsign", 1, ActivationKernel(ActivationOp::kSoftsign));
  registry.Register("", "HardSigmoid", 6, ActivationKernel(ActivationOp::kHardSigmoid));
  registry.Register("", "HardSwish", 14, ActivationKernel(ActivationOp::kHardSwish));
  registry.Register("", "Elu", 6, ActivationKernel(ActivationOp::kElu));
  registry.Register("", "Selu", 6, ActivationKernel(ActivationOp::kSelu));
  registry.Register("", "Celu", 12, ActivationKernel(ActivationOp::kCelu));
  registry.Register("", "Mish", 18, ActivationKernel(ActivationOp::kMish));
  registry.Register("", "ThresholdedRelu", 10, ActivationKernel(ActivationOp::kThresholdedRelu));
  registry.Register("", "Shrink", 9, ActivationKernel(ActivationOp::kShrink));  // float types only
  registry.Register("", "PRelu", 7, PReluKernel());  // unidirectional broadcasting from 7

  registry.Register("", "Clip", 6, 10, ClipAttributeKernel());
  registry.Register("", "Clip", 11, ClipInputKernel());
  registry.Register("", "Where", 9, WhereKernel());
  registry.Register("", "Cast", 6, CastKernel());  // opset 1 named the target type by string
  registry.Register("", "CastLike", 15, CastLikeKernel());
  registry.Register("", "BitCast", 26, BitCastKernel());
}

}  // namespace attune
