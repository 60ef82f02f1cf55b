#include "importer/external_data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune::importer {
namespace {

namespace fs = std::filesystem;

absl::Status Refuse(std::string_view what, const std::string& detail) {
  return absl::InvalidArgumentError(absl::StrCat(Sv(what), ": ", detail));
}

absl::StatusOr<int64_t> ParseNonNegative(const std::string& key, const std::string& text, std::string_view what) {
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value < 0)
    return Refuse(what, absl::StrCat("external data ", key, " ", QuoteName(text), " is not a non-negative integer"));
  return value;
}

// True when `inner` is `folder` itself or lies below it (both canonical).
bool IsInside(const fs::path& folder, const fs::path& inner) {
  auto f = folder.begin();
  auto i = inner.begin();
  for (; f != folder.end(); ++f, ++i) {
    if (f->empty()) continue;  // a trailing separator yields an empty element
    if (i == inner.end() || *f != *i) return false;
  }
  return true;
}

// Closes a POSIX file descriptor on scope exit.
class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace

absl::StatusOr<ExternalDataRef> ParseExternalDataRef(const std::vector<std::pair<std::string, std::string>>& entries,
                                                     std::string_view what) {
  ExternalDataRef ref;
  bool has_location = false;
  for (const auto& [key, value] : entries) {
    if (key == "location") {
      ref.location = value;
      has_location = true;
    } else if (key == "offset") {
      auto offset = ParseNonNegative(key, value, what);
      if (!offset.ok()) return offset.status();
      ref.offset = *offset;
    } else if (key == "length") {
      auto length = ParseNonNegative(key, value, what);
      if (!length.ok()) return length.status();
      ref.length = *length;
    }
    // "checksum" (an optional SHA-1) and unknown keys are not used.
  }
  if (!has_location || ref.location.empty()) return Refuse(what, "external data has no location");
  return ref;
}

absl::StatusOr<std::string> ResolveExternalDataPath(const std::string& base_dir, const std::string& location,
                                                    std::string_view what) {
  const std::string quoted = absl::StrCat("external data location ", QuoteName(location));
  if (base_dir.empty())
    return Refuse(what, absl::StrCat(quoted, " cannot be used: the model was not loaded from a folder"));
  if (location.find('\0') != std::string::npos) return Refuse(what, absl::StrCat(quoted, " contains a NUL byte"));
  const bool drive_letter = location.size() >= 2 && location[1] == ':';
  if (location.front() == '/' || location.front() == '\\' || drive_letter)
    return Refuse(what, absl::StrCat(quoted, " is an absolute path; only paths inside the model folder are allowed"));
  for (absl::string_view part : absl::StrSplit(location, absl::ByAnyChar("/\\"))) {
    if (part == "..")
      return Refuse(what, absl::StrCat(quoted, " contains '..'; only paths inside the model folder are allowed"));
  }

  std::error_code ec;
  const fs::path folder = fs::canonical(base_dir, ec);
  if (ec)
    return Refuse(what, absl::StrCat("model folder ", QuoteName(base_dir), " cannot be resolved: ", ec.message()));
  const fs::path candidate = folder / location;
  if (!fs::exists(candidate, ec))
    return Refuse(what, absl::StrCat("external data file ", QuoteName(location), " not found in the model folder '",
                                     folder.string(), "'"));
  const fs::path real = fs::canonical(candidate, ec);
  if (ec) return Refuse(what, absl::StrCat(quoted, " cannot be resolved: ", ec.message()));
  if (!IsInside(folder, real))
    return Refuse(what, absl::StrCat(quoted, " resolves to ", QuoteName(real.string()), ", outside the model folder '",
                                     folder.string(), "'"));
  if (!fs::is_regular_file(real, ec))
    return Refuse(what, absl::StrCat(quoted, " is not a regular file"));
  return real.string();
}

absl::StatusOr<Tensor> ReadExternalTensor(const ExternalDataRef& ref, const std::string& base_dir, ElementType type,
                                          std::vector<int64_t> shape, int64_t max_bytes, std::string_view what,
                                          MappedFileCache* mapped_files) {
  auto path = ResolveExternalDataPath(base_dir, ref.location, what);
  if (!path.ok()) return path.status();

  auto count = CheckedElementCount(shape);
  if (!count.ok()) return Refuse(what, std::string(count.status().message()));
  const int64_t element_size = static_cast<int64_t>(ElementSize(type));
  if (element_size == 0 || *count > max_bytes / element_size)
    return absl::ResourceExhaustedError(absl::StrCat(Sv(what), ": ", ElementTypeName(type), ShapeToString(shape),
                                                     " is larger than the tensor size limit of ", max_bytes,
                                                     " bytes"));
  const int64_t expected = *count * element_size;
  const int64_t length = ref.length.value_or(expected);
  if (length != expected)
    return Refuse(what, absl::StrCat("external data length ", length, " in ", QuoteName(ref.location),
                                     " does not match the tensor's size of ", expected, " bytes (",
                                     ElementTypeName(type), ShapeToString(shape), ")"));

  FileDescriptor fd(::open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0)
    return Refuse(what,
                  absl::StrCat("cannot open external data file ", QuoteName(ref.location), ": ", std::strerror(errno)));
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode))
    return Refuse(what, absl::StrCat("external data file ", QuoteName(ref.location), " is not a regular file"));
  const int64_t file_size = info.st_size;
  if (ref.offset > file_size)
    return Refuse(what, absl::StrCat("external data offset ", ref.offset, " is past the end of ", QuoteName(ref.location),
                                     " (", file_size, " bytes)"));
  if (length > file_size - ref.offset)
    return Refuse(what, absl::StrCat("external data range offset ", ref.offset, " + length ", length,
                                     " runs past the end of ", QuoteName(ref.location), " (", file_size, " bytes)"));

  // Bools stay copied, as inline raw_data bools are: their bytes may need
  // rewriting to 0 and 1, which is never done in a mapping.
  if (mapped_files != nullptr && length > 0 && type != ElementType::kBool && ref.offset % element_size == 0) {
    std::shared_ptr<MappedFile> file = mapped_files->Get(*path, fd.get(), file_size);
    if (file != nullptr && ref.offset <= file->size() && length <= file->size() - ref.offset)
      return MappedTensor(file, ref.offset, type, std::move(shape));
  }

  auto tensor = Tensor::Create(type, std::move(shape), max_bytes);
  if (!tensor.ok()) return absl::Status(tensor.status().code(), absl::StrCat(Sv(what), ": ", tensor.status().message()));
  char* out = static_cast<char*>(tensor->raw_data());
  int64_t done = 0;
  while (done < length) {
    const size_t chunk = static_cast<size_t>(std::min<int64_t>(length - done, int64_t{1} << 30));
    const ssize_t got = ::pread(fd.get(), out + done, chunk, static_cast<off_t>(ref.offset + done));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0)
      return Refuse(what, absl::StrCat("reading external data file ", QuoteName(ref.location), " failed at byte ",
                                       ref.offset + done, got < 0 ? absl::StrCat(": ", std::strerror(errno)) : ""));
    done += got;
  }
  return tensor;
}

}  // namespace attune::importer
