// Conv as a plain loop over every output and the taps of its window: the
// fallback for what oneDNN does not take, and a second implementation for
// the tests.
#pragma once

#include "ops/conv/conv_params.h"

namespace attune {

/// y[N, M, out...] = conv(x[N, C, in...], w[M, C/group, k...]) + b[M] (b may
/// be null), float32, dense row-major. Each output sums its window's taps in
/// float, channel by channel then kernel position, bias first; taps in the
/// padding are skipped, so a NaN in x reaches exactly the outputs whose
/// window holds it. (n, m) planes are split over `threads`.
void ConvReference(const ConvGeometry& g, const float* x, const float* w, const float* b, float* y, int threads);

}  // namespace attune
