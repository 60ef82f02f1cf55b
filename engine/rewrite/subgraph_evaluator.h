// How a pass evaluates a graph it cut out or cloned (a mask to prove, a rewrite
// to verify) without knowing the executor: the interface lives in
// ops/subgraph_evaluator.h, where the control-flow kernels use it too.
#pragma once

#include "ops/subgraph_evaluator.h"
