// attune.ElementwiseChain: a tree of float32 element-wise ops run as one pass
// over memory. The chain is a program of steps, each one standard op on the
// chain's inputs or on earlier steps' results; the last step's result is the
// output. Elements are taken a block at a time, every step runs over the
// block in buffers that stay in L1, and each step rounds as its standalone
// op does (the same vector kernels, the same float arithmetic), so the chain
// gives the bits of the ops it replaces.
//
// Attributes:
//   ops       the steps' op types, in order (kChainOps)
//   operands  two per step: input i of the node as i, the result of step j
//             as (number of inputs + j), none (a unary step's second) as -1
//   scalar    one per input: 1 when the input is one element read for every
//             element, 0 when it has the output's shape (every 0 input
//             must have one shape, which is the output's)
#pragma once

#include <array>
#include <string_view>

#include "ops/kernel.h"

namespace attune::elementwise {

/// The ops a step may be; the first four take two operands.
inline constexpr std::array<std::string_view, 14> kChainOps = {
    "Add", "Sub", "Mul", "Div", "Neg", "Abs", "Sqrt", "Reciprocal", "Relu", "Exp", "Log", "Tanh", "Sigmoid", "Erf"};
inline constexpr int kChainBinaryOps = 4;
/// Steps and inputs a chain may have.
inline constexpr int kMaxChainSteps = 32;
inline constexpr int kMaxChainInputs = 16;

KernelFactory ElementwiseChainKernel();

}  // namespace attune::elementwise
