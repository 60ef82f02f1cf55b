#include "ops/registry.h"
#include "ops/resize/kernels.h"

namespace attune {

void RegisterResizeKernels(KernelRegistry& registry) {
  // Resize-10 takes (X, scales) with Upsample's coordinates; 11 adds roi,
  // sizes and the coordinate modes; 13 makes roi and scales optional; 18 adds
  // antialias, axes and keep_aspect_ratio_policy; 19 half_pixel_symmetric.
  registry.Register("", "Resize", 10, MakeResizeKernel);
  // Upsample-7 has scales as an attribute, -9 as an input; removed at 10.
  registry.Register("", "Upsample", 7, 9, MakeUpsampleKernel);
  // GridSample-16 is 4-D with bilinear/bicubic; 20 N-D with linear/cubic; 22 adds types.
  registry.Register("", "GridSample", 16, MakeGridSampleKernel);
  registry.Register("", "AffineGrid", 20, MakeAffineGridKernel);
}

}  // namespace attune
