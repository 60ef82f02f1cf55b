// A float rounded as a 16-bit tensor would hold it: what a subgraph computing
// in float16 or bfloat16 gives at each step, for the code that reproduces or
// proves such steps (the attention mask proof and the fused op's hidden rows).
#pragma once

#include "attune/element_type.h"

namespace attune {

/// x rounded to float16 or bfloat16 and back (to +-inf beyond float16's
/// range); x itself for every other type. Out of line, in a portable
/// translation unit: the per-ISA kernels call it too.
float RoundThroughType(ElementType type, float x);

}  // namespace attune
