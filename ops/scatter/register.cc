// The scatter family: copies of `data` with `updates` written (or reduced)
// at positions `indices` name. Each factory reads the opset to know which
// `reduction` values the node may use.
#include "ops/registry.h"
#include "ops/scatter/kernels.h"

namespace attune {

void RegisterScatterKernels(KernelRegistry& registry) {
  using namespace scatter;  // NOLINT: this file is the family's table

  registry.Register("", "ScatterND", 11, MakeScatterNDKernel);              // add/mul from 16, max/min from 18
  registry.Register("", "ScatterElements", 11, MakeScatterElementsKernel);  // add/mul from 16, max/min from 18
  // Deprecated at 11 in favour of ScatterElements, whose meaning it has.
  registry.Register("", "Scatter", 9, 10, MakeScatterElementsKernel);
  registry.Register("", "TensorScatter", 24, MakeTensorScatterKernel);
}

}  // namespace attune
