// Factories of the element-wise kernels; register.cc maps ops and opsets to them.
#pragma once

#include "ops/kernel.h"

namespace attune::elementwise {

enum class ArithmeticOp { kAdd, kSub, kMul, kDiv };
KernelFactory ArithmeticKernel(ArithmeticOp op);
KernelFactory ModKernel();
KernelFactory PowKernel();

enum class ComparisonOp { kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual };
KernelFactory ComparisonKernel(ComparisonOp op);

/// And/Or/Xor on bool; BitwiseAnd/Or/Xor on integers.
enum class LogicalOp { kAnd, kOr, kXor, kBitwiseAnd, kBitwiseOr, kBitwiseXor };
KernelFactory LogicalKernel(LogicalOp op);
KernelFactory NotKernel();
KernelFactory BitwiseNotKernel();
KernelFactory BitShiftKernel();

/// Min, Max, Sum, Mean: any number of broadcast inputs.
enum class VariadicOp { kMin, kMax, kSum, kMean };
KernelFactory VariadicKernel(VariadicOp op);

enum class UnaryMathOp {
  kAbs, kNeg, kSign, kReciprocal, kSqrt, kExp, kLog, kErf, kFloor, kCeil, kRound,
  kSin, kCos, kTan, kAsin, kAcos, kAtan, kSinh, kCosh, kAsinh, kAcosh, kAtanh,
  kIsNaN, kIsInf,
};
KernelFactory UnaryMathKernel(UnaryMathOp op);

enum class ActivationOp {
  kRelu, kLeakyRelu, kSigmoid, kTanh, kGelu, kSoftplus, kSoftsign, kHardSigmoid, kHardSwish,
  kElu, kSelu, kCelu, kMish, kThresholdedRelu, kShrink,
};
KernelFactory ActivationKernel(ActivationOp op);
KernelFactory PReluKernel();
/// Swish (ONNX opset 24): x · sigmoid(alpha · x).
KernelFactory SwishKernel();

/// Clip with min/max attributes (opsets 6-10) or optional inputs (11+).
KernelFactory ClipAttributeKernel();
KernelFactory ClipInputKernel();

KernelFactory WhereKernel();
KernelFactory CastKernel();
KernelFactory CastLikeKernel();
KernelFactory BitCastKernel();

}  // namespace attune::elementwise
