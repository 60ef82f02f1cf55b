#include "importer/mapped_file.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"

namespace attune::importer {

std::shared_ptr<MappedFile> MappedFile::Map(int fd, int64_t size) {
  if (size <= 0) return nullptr;
  // Writable but private: a private writable mapping is charged against the
  // commit limit, so under strict overcommit a big file may be refused here;
  // the caller then reads it as before.
  void* p = ::mmap(nullptr, static_cast<size_t>(size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  if (p == MAP_FAILED) return nullptr;
  return std::shared_ptr<MappedFile>(new MappedFile(static_cast<char*>(p), size));
}

MappedFile::~MappedFile() { ::munmap(data_, static_cast<size_t>(size_)); }

void MappedFile::Claim(int64_t offset, int64_t size) {
  const int64_t end = offset + size;
  std::lock_guard<std::mutex> lock(mu_);
  auto next = claimed_.lower_bound(offset);
  if (next != claimed_.end() && next->first < end) ranges_overlap_ = true;
  if (next != claimed_.begin() && std::prev(next)->second > offset) ranges_overlap_ = true;
  auto [it, inserted] = claimed_.emplace(offset, end);
  if (!inserted) {
    ranges_overlap_ = true;
    it->second = std::max(it->second, end);
  }
}

void MappedFile::DropPages(int64_t offset, int64_t size) const {
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  if (page <= 0) return;
  const int64_t first = (offset + page - 1) / page * page;
  const int64_t last = (offset + size) / page * page;
  if (last > first) ::madvise(data_ + first, static_cast<size_t>(last - first), MADV_DONTNEED);
}

void MappedFile::DropCopied(int64_t offset, int64_t size) {
  const int64_t end = offset + size;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto next = claimed_.lower_bound(offset);
    if (next != claimed_.end() && next->first < end) return;
    if (next != claimed_.begin() && std::prev(next)->second > offset) return;
  }
  DropPages(offset, size);
}

bool MappedFile::ranges_overlap() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ranges_overlap_;
}

// What a mapped tensor's storage holds: the mapping, and the range whose pages
// it gives back when no copy of the tensor is left.
class MappedRange {
 public:
  MappedRange(std::shared_ptr<MappedFile> file, int64_t offset, int64_t size)
      : file_(std::move(file)), offset_(offset), size_(size) {
    file_->Claim(offset, size);
  }
  ~MappedRange() {
    // Pages shared with a neighbour's range, or with an overlapping tensor's,
    // may still be read; only pages that no other tensor can reach are dropped.
    // They were never written (constants are not), so dropping loses nothing.
    if (!file_->ranges_overlap()) file_->DropPages(offset_, size_);
  }
  MappedRange(const MappedRange&) = delete;
  MappedRange& operator=(const MappedRange&) = delete;

 private:
  std::shared_ptr<MappedFile> file_;
  int64_t offset_;
  int64_t size_;
};

absl::StatusOr<Tensor> MappedTensor(const std::shared_ptr<MappedFile>& file, int64_t offset, ElementType type,
                                    std::vector<int64_t> shape) {
  const int64_t element_size = static_cast<int64_t>(ElementSize(type));
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status();
  if (element_size == 0 || offset < 0 || offset % element_size != 0 || offset > file->size() ||
      *count > (file->size() - offset) / element_size)
    return absl::InternalError(absl::StrCat("mapped tensor ", ElementTypeName(type), ShapeToString(shape),
                                            " at offset ", offset, " does not fit a file of ", file->size(),
                                            " bytes with its alignment"));
  auto owner = std::make_shared<const MappedRange>(file, offset, *count * element_size);
  return Tensor::Shared(type, std::move(shape), file->data_ + offset, std::move(owner));
}

// A constant over the file's bytes, at any alignment; its range is claimed like a tensor's.
class MappedFileConstantImpl final : public FileConstant {
 public:
  MappedFileConstantImpl(std::shared_ptr<MappedFile> file, int64_t offset, ElementType type, std::vector<int64_t> shape,
                  int64_t size)
      : range_(file, offset, size), file_(std::move(file)), offset_(offset), type_(type),
        shape_(std::move(shape)), size_(size) {}

  absl::StatusOr<Tensor> Restore() const override {
    ASSIGN_OR_RETURN(Tensor t, Tensor::CreateUninitialized(type_, shape_, std::max<int64_t>(size_, 1)));
    if (size_ > 0) std::memcpy(t.raw_data(), bytes(), static_cast<size_t>(size_));
    return t;
  }
  ElementType type() const override { return type_; }
  const std::vector<int64_t>& shape() const override { return shape_; }
  const char* bytes() const override { return file_->data() + offset_; }
  int64_t byte_size() const override { return size_; }
  void DropPages(int64_t offset, int64_t size) const override {
    offset = std::clamp<int64_t>(offset, 0, size_);
    size = std::clamp<int64_t>(size, 0, size_ - offset);
    if (!file_->ranges_overlap()) file_->DropPages(offset_ + offset, size);
  }

 private:
  MappedRange range_;  // drops the pages when the constant goes
  std::shared_ptr<MappedFile> file_;
  int64_t offset_;
  ElementType type_;
  std::vector<int64_t> shape_;
  int64_t size_;
};

absl::StatusOr<std::shared_ptr<const FileConstant>> MappedFileConstant(
    const std::shared_ptr<MappedFile>& file, int64_t offset, ElementType type, std::vector<int64_t> shape) {
  const int64_t element_size = static_cast<int64_t>(ElementSize(type));
  auto count = CheckedElementCount(shape);
  if (!count.ok()) return count.status();
  if (element_size == 0 || offset < 0 || offset > file->size() || *count > (file->size() - offset) / element_size)
    return absl::InternalError(absl::StrCat("mapped constant ", ElementTypeName(type), ShapeToString(shape),
                                            " at offset ", offset, " does not fit a file of ", file->size(), " bytes"));
  return std::make_shared<const MappedFileConstantImpl>(file, offset, type, std::move(shape), *count * element_size);
}

std::shared_ptr<MappedFile> MappedFileCache::Get(const std::string& real_path, int fd, int64_t size) {
  auto [it, inserted] = files_.try_emplace(real_path);
  if (inserted) it->second = MappedFile::Map(fd, size);
  return it->second;
}

}  // namespace attune::importer
