#include "engine/io/npy.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"

namespace attune {
namespace {

constexpr char kMagic[] = "\x93NUMPY";

absl::StatusOr<ElementType> TypeFromDescr(std::string_view descr) {
  // '<' little-endian, '|' not applicable, '=' native (little on x86).
  if (descr.size() < 2) return absl::InvalidArgumentError(absl::StrCat("npy: bad dtype ", QuoteName(descr)));
  const char order = descr[0];
  if (order == '>')
    return absl::UnimplementedError(absl::StrCat("npy: big-endian dtype ", QuoteName(descr), " is not supported"));
  const std::string code(descr.substr(1));
  if (code == "f4") return ElementType::kFloat32;
  if (code == "f8") return ElementType::kFloat64;
  if (code == "f2") return ElementType::kFloat16;
  if (code == "i8") return ElementType::kInt64;
  if (code == "i4") return ElementType::kInt32;
  if (code == "i2") return ElementType::kInt16;
  if (code == "i1") return ElementType::kInt8;
  if (code == "u8") return ElementType::kUint64;
  if (code == "u4") return ElementType::kUint32;
  if (code == "u2") return ElementType::kUint16;
  if (code == "u1") return ElementType::kUint8;
  if (code == "b1") return ElementType::kBool;
  return absl::UnimplementedError(absl::StrCat("npy: dtype ", QuoteName(descr), " is not supported"));
}

const char* DescrFromType(ElementType type) {
  switch (type) {
    case ElementType::kFloat32: return "<f4";
    case ElementType::kFloat64: return "<f8";
    case ElementType::kFloat16: return "<f2";
    case ElementType::kInt64: return "<i8";
    case ElementType::kInt32: return "<i4";
    case ElementType::kInt16: return "<i2";
    case ElementType::kInt8: return "|i1";
    case ElementType::kUint64: return "<u8";
    case ElementType::kUint32: return "<u4";
    case ElementType::kUint16: return "<u2";
    case ElementType::kUint8: return "|u1";
    case ElementType::kBool: return "|b1";
    default: return nullptr;
  }
}

// Returns the text after 'key': in a Python dict literal header.
absl::StatusOr<std::string_view> DictEntry(std::string_view header, std::string_view key) {
  const std::string quoted = absl::StrCat("'", std::string(key), "'");
  size_t pos = header.find(quoted);
  if (pos == std::string_view::npos)
    return absl::InvalidArgumentError(absl::StrCat("npy: header has no ", quoted, " entry"));
  pos = header.find(':', pos + quoted.size());
  if (pos == std::string_view::npos) return absl::InvalidArgumentError("npy: malformed header");
  std::string_view rest = header.substr(pos + 1);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  return rest;
}

}  // namespace

absl::StatusOr<Tensor> ParseNpy(std::string_view bytes, int64_t max_bytes) {
  if (bytes.size() < 10 || std::memcmp(bytes.data(), kMagic, 6) != 0)
    return absl::InvalidArgumentError("npy: not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len, header_start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) return absl::InvalidArgumentError("npy: truncated header");
    header_len = 0;
    for (int i = 0; i < 4; ++i) header_len |= static_cast<size_t>(static_cast<unsigned char>(bytes[8 + i])) << (8 * i);
    header_start = 12;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("npy: unsupported format version ", major));
  }
  if (header_len > bytes.size() - header_start) return absl::InvalidArgumentError("npy: truncated header");
  const std::string_view header = bytes.substr(header_start, header_len);

  ASSIGN_OR_RETURN(std::string_view descr_text, DictEntry(header, "descr"));
  if (descr_text.empty() || descr_text.front() != '\'') return absl::InvalidArgumentError("npy: malformed descr");
  const size_t descr_end = descr_text.find('\'', 1);
  if (descr_end == std::string_view::npos) return absl::InvalidArgumentError("npy: malformed descr");
  ASSIGN_OR_RETURN(ElementType type, TypeFromDescr(descr_text.substr(1, descr_end - 1)));

  ASSIGN_OR_RETURN(std::string_view order_text, DictEntry(header, "fortran_order"));
  if (absl::StartsWith(absl::string_view(order_text.data(), order_text.size()), "True"))
    return absl::UnimplementedError("npy: Fortran-order arrays are not supported");

  ASSIGN_OR_RETURN(std::string_view shape_text, DictEntry(header, "shape"));
  if (shape_text.empty() || shape_text.front() != '(') return absl::InvalidArgumentError("npy: malformed shape");
  const size_t shape_end = shape_text.find(')');
  if (shape_end == std::string_view::npos) return absl::InvalidArgumentError("npy: malformed shape");
  std::vector<int64_t> shape;
  for (absl::string_view part : absl::StrSplit(absl::string_view(shape_text.data() + 1, shape_end - 1), ',')) {
    part = absl::StripAsciiWhitespace(part);
    if (part.empty()) continue;
    int64_t d;
    if (!absl::SimpleAtoi(part, &d) || d < 0)
      return absl::InvalidArgumentError(absl::StrCat("npy: bad dimension ", QuoteName(std::string(part))));
    shape.push_back(d);
  }
  ASSIGN_OR_RETURN(Tensor tensor, Tensor::Create(type, shape, max_bytes));
  const size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != tensor.byte_size())
    return absl::InvalidArgumentError(absl::StrCat("npy: data is ", bytes.size() - data_start, " bytes, shape ",
                                                   ShapeToString(shape), " needs ", tensor.byte_size()));
  if (tensor.byte_size() > 0) std::memcpy(tensor.raw_data(), bytes.data() + data_start, tensor.byte_size());
  if (type == ElementType::kBool) {
    for (uint8_t& b : tensor.values<uint8_t>()) b = b != 0;
  }
  return tensor;
}

absl::StatusOr<std::string> SerializeNpy(const Tensor& tensor) {
  const char* descr = DescrFromType(tensor.type());
  if (descr == nullptr)
    return absl::UnimplementedError(absl::StrCat("npy: cannot write element type ", ElementTypeName(tensor.type())));
  std::string shape = "(";
  for (size_t i = 0; i < tensor.shape().size(); ++i) absl::StrAppend(&shape, i ? ", " : "", tensor.shape()[i]);
  absl::StrAppend(&shape, tensor.shape().size() == 1 ? ",)" : ")");
  std::string header = absl::StrCat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape, ", }");
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::string out(kMagic, 6);
  out.push_back(1);
  out.push_back(0);
  out.push_back(static_cast<char>(header.size() & 0xff));
  out.push_back(static_cast<char>(header.size() >> 8));
  out += header;
  out.append(static_cast<const char*>(tensor.raw_data()), tensor.byte_size());
  return out;
}

absl::StatusOr<std::string> ReadFileBytes(const std::string& path, int64_t max_bytes) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", QuoteName(path)));
  const std::streamoff size = in.tellg();
  if (size < 0) return absl::InvalidArgumentError(absl::StrCat("cannot read ", QuoteName(path)));
  if (size > max_bytes)
    return absl::ResourceExhaustedError(absl::StrCat(QuoteName(path), " is larger than ", max_bytes, " bytes"));
  std::string bytes(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(bytes.data(), size)) return absl::InvalidArgumentError(absl::StrCat("cannot read ", QuoteName(path)));
  return bytes;
}

absl::StatusOr<Tensor> ReadNpyFile(const std::string& path, int64_t max_bytes) {
  ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path, max_bytes + 4096));
  auto t = ParseNpy(bytes, max_bytes);
  if (!t.ok()) return Annotate(t.status(), path);
  return t;
}

absl::Status WriteNpyFile(const std::string& path, const Tensor& tensor) {
  ASSIGN_OR_RETURN(std::string bytes, SerializeNpy(tensor));
  std::ofstream out(path, std::ios::binary);
  if (!out || !out.write(bytes.data(), bytes.size()))
    return absl::InvalidArgumentError(absl::StrCat("cannot write ", QuoteName(path)));
  return absl::OkStatus();
}

}  // namespace attune
