// Which fused-attention implementation runs (kernels/README.md states the
// dispatch rule of kAuto). The generic ExecOptions carries it without naming
// its values, so ops/kernel.h knows nothing of attention's kernels.
#pragma once

namespace attune {

enum class AttentionBackend { kAuto, kSimd, kOneDnn, kReference };
static_assert(AttentionBackend{} == AttentionBackend::kAuto, "ExecOptions' value-initialised default is kAuto");

}  // namespace attune
