// Internal to importer/: a model or external-data file mapped into memory, so
// that initializers stored in it raw use its bytes in place instead of copies.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "attune/tensor.h"
#include "core/ir/file_constant.h"

namespace attune::importer {

/// The whole of one regular file, mapped private and copy-on-write
/// (PROT_READ | PROT_WRITE, MAP_PRIVATE): Attune never writes to a constant,
/// and if something did, the write would stay in this process and could not
/// fault. Tensors made by MappedTensor keep the mapping alive; it is unmapped
/// when the last of them is destroyed. The file must not change while it is
/// mapped: pages not yet read would show the new bytes, and a truncated file
/// raises SIGBUS on access.
class MappedFile {
 public:
  /// Maps the first `size` bytes of the open file `fd`; nullptr when the system
  /// refuses (a caller then reads the file as before).
  static std::shared_ptr<MappedFile> Map(int fd, int64_t size);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const char* data() const { return data_; }
  int64_t size() const { return size_; }

  /// Drops from the process the pages wholly inside [offset, offset + size),
  /// bytes that were copied out and that no tensor made by MappedTensor
  /// overlaps: reading them for the copy made them resident, and nothing
  /// reads them again (if something did, they would come back from the file).
  void DropCopied(int64_t offset, int64_t size);

 private:
  friend class MappedRange;
  friend class MappedFileConstantImpl;
  friend absl::StatusOr<Tensor> MappedTensor(const std::shared_ptr<MappedFile>& file, int64_t offset,
                                             ElementType type, std::vector<int64_t> shape);
  MappedFile(char* data, int64_t size) : data_(data), size_(size) {}
  // Records that a tensor uses [offset, offset + size); notes overlaps.
  void Claim(int64_t offset, int64_t size);
  bool ranges_overlap() const;
  // Drops the pages wholly inside [offset, offset + size) (MADV_DONTNEED).
  void DropPages(int64_t offset, int64_t size) const;

  char* data_;
  int64_t size_;
  mutable std::mutex mu_;
  std::map<int64_t, int64_t> claimed_;  // start -> end of the ranges handed to tensors
  bool ranges_overlap_ = false;
};

/// A tensor of `type` and `shape` over the file's bytes at `offset`, without a
/// copy. The range must lie inside the file and `offset` be a multiple of the
/// element size (Internal error otherwise: callers check both first). When the
/// last copy of the tensor is destroyed (a weight packed by its kernel and
/// released by the graph), the pages wholly inside its range are dropped from
/// the process (MADV_DONTNEED) unless another tensor's range overlaps it.
absl::StatusOr<Tensor> MappedTensor(const std::shared_ptr<MappedFile>& file, int64_t offset, ElementType type,
                                    std::vector<int64_t> shape);

/// The `type` `shape` constant whose bytes lie at `offset` of the file, left
/// there whatever their alignment (core/ir/file_constant.h). When the
/// holder is destroyed, the pages wholly inside its range are dropped as for
/// MappedTensor. The range must lie inside the file (Internal error otherwise).
absl::StatusOr<std::shared_ptr<const FileConstant>> MappedFileConstant(
    const std::shared_ptr<MappedFile>& file, int64_t offset, ElementType type, std::vector<int64_t> shape);

/// The external-data files of one model, each mapped once however many of its
/// tensors it holds.
class MappedFileCache {
 public:
  /// The mapping of the file at `real_path`, open as `fd` with `size` bytes, made
  /// on first use; nullptr when it cannot be mapped.
  std::shared_ptr<MappedFile> Get(const std::string& real_path, int fd, int64_t size);

 private:
  absl::flat_hash_map<std::string, std::shared_ptr<MappedFile>> files_;
};

}  // namespace attune::importer
