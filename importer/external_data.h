// Internal to importer/: reading ONNX external tensor data, confined to the model's folder.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "importer/mapped_file.h"

namespace attune::importer {

/// The `external_data` entries of a TensorProto.
struct ExternalDataRef {
  std::string location;
  int64_t offset = 0;
  std::optional<int64_t> length;
};

/// Reads location/offset/length (checksum and unknown keys are ignored);
/// `what` ("initializer 'W'") prefixes the errors.
absl::StatusOr<ExternalDataRef> ParseExternalDataRef(const std::vector<std::pair<std::string, std::string>>& entries,
                                                     std::string_view what);

/// The real path of `location` inside `base_dir`. Refuses an empty `base_dir`,
/// absolute paths, any ".." component, missing files, non-regular files and
/// symlinks whose target leaves the folder.
absl::StatusOr<std::string> ResolveExternalDataPath(const std::string& base_dir, const std::string& location,
                                                    std::string_view what);

/// A tensor of `type` and `shape` read from the external file. The range must lie
/// inside the file and its length equal the tensor's byte size; both are checked
/// before anything is allocated. With `mapped_files`, a non-bool tensor whose
/// offset is a multiple of its element size uses the mapped file's bytes in
/// place (MappedTensor); other tensors, or a file that cannot be mapped, are read.
absl::StatusOr<Tensor> ReadExternalTensor(const ExternalDataRef& ref, const std::string& base_dir, ElementType type,
                                          std::vector<int64_t> shape, int64_t max_bytes, std::string_view what,
                                          MappedFileCache* mapped_files = nullptr);

}  // namespace attune::importer
