// Which initializers the reader leaves in the mapped model file
// (core/ir/file_constant.h) instead of making tensors of them: float weights
// of 1 MiB or more read only by consumers that take them in place.
//  - Always, when the raw data is not aligned to its type (it would be
//    copied): an embedding Gather's table and MatMulNBits' inputs.
//  - With weight compression at load, aligned or not: the B of MatMul / Gemm
//    (directly or through a Transpose or Cast) too, which the compression
//    quantizes straight from the file and then gives back, so that a float
//    copy of the model is never resident, only one weight's pages at a time.
#pragma once

#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/ir/file_constant.h"
#include "importer/proto_tensor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

class FileWeightPolicy {
 public:
  FileWeightPolicy(const onnx::GraphProto& graph, bool for_compression);

  /// The constant left in place for `init`, or null when it is to be read as before.
  absl::StatusOr<std::shared_ptr<const FileConstant>> Defer(const onnx::TensorProto& init,
                                                                 const MappedRawData& raw) const;

 private:
  bool enabled_ = true;
  bool for_compression_ = false;
  absl::flat_hash_map<std::string, bool> in_place_readers_only_;  // initializer name -> every reader takes it in place
};

}  // namespace attune::importer
