// Kernel factories of the selection and indexing family (registered in register.cc).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

using SelectKernelOr = absl::StatusOr<std::unique_ptr<Kernel>>;

/// The node's optional int attribute `axis` (Compress, Unique): nullopt when absent.
absl::StatusOr<std::optional<int64_t>> OptionalAxisAttribute(const KernelInfo& info);

/// The axis that attribute selects in `shape` (Compress, Unique). Without the
/// attribute the input is read flat: `shape` becomes its element count and
/// the axis is 0. A negative axis counts from the end.
absl::StatusOr<int64_t> ResolveOptionalAxis(const std::optional<int64_t>& axis_attr, int64_t num_elements,
                                            std::vector<int64_t>& shape, const std::string& label);

SelectKernelOr MakeHardmaxKernel(const KernelInfo& info);    // hardmax.cc
SelectKernelOr MakeTopKKernel(const KernelInfo& info);       // top_k.cc
SelectKernelOr MakeEyeLikeKernel(const KernelInfo& info);    // generators.cc
SelectKernelOr MakeOneHotKernel(const KernelInfo& info);     // generators.cc
SelectKernelOr MakeCompressKernel(const KernelInfo& info);   // compress.cc
SelectKernelOr MakeNonZeroKernel(const KernelInfo& info);    // compress.cc
SelectKernelOr MakeGatherNDKernel(const KernelInfo& info);   // gather_nd.cc
SelectKernelOr MakeUniqueKernel(const KernelInfo& info);     // unique.cc
SelectKernelOr MakeNonMaxSuppressionKernel(const KernelInfo& info);  // non_max_suppression.cc

}  // namespace attune
