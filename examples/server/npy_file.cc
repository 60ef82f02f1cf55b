#include "npy_file.h"

#include <cstdint>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

namespace server {
namespace {

using attune::ElementType;

constexpr std::pair<const char*, ElementType> kDtypes[] = {
    {"<f4", ElementType::kFloat32}, {"<f8", ElementType::kFloat64}, {"<f2", ElementType::kFloat16},
    {"<i8", ElementType::kInt64},   {"<i4", ElementType::kInt32},   {"<i2", ElementType::kInt16},
    {"|i1", ElementType::kInt8},    {"<u8", ElementType::kUint64},  {"<u4", ElementType::kUint32},
    {"<u2", ElementType::kUint16},  {"|u1", ElementType::kUint8},   {"|b1", ElementType::kBool},
};

// The header dictionary from the value of 'key' on (leading spaces skipped).
std::string Field(const std::string& header, const std::string& key) {
  const size_t at = header.find("'" + key + "'");
  const size_t colon = at == std::string::npos ? at : header.find(':', at);
  if (colon == std::string::npos) return "";
  const size_t value = header.find_first_not_of(' ', colon + 1);
  return value == std::string::npos ? "" : header.substr(value);
}

absl::Status Bad(const std::string& path, const std::string& why) {
  return absl::InvalidArgumentError(path + ": " + why);
}

}  // namespace

absl::StatusOr<attune::Tensor> ReadNpy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(path + ": cannot open");
  char magic[8];
  if (!in.read(magic, 8) || std::string(magic, 6) != "\x93NUMPY") return Bad(path, "not a .npy file");
  const int major = static_cast<unsigned char>(magic[6]);
  uint32_t header_len = 0;
  unsigned char len[4] = {0, 0, 0, 0};
  if (!in.read(reinterpret_cast<char*>(len), major == 1 ? 2 : 4)) return Bad(path, "truncated header");
  header_len = len[0] | len[1] << 8 | len[2] << 16 | static_cast<uint32_t>(len[3]) << 24;
  if (header_len > 65536) return Bad(path, "header too long");
  std::string header(header_len, '\0');
  if (!in.read(header.data(), header_len)) return Bad(path, "truncated header");

  const std::string descr = Field(header, "descr");
  ElementType type = ElementType::kUndefined;
  for (const auto& [code, t] : kDtypes)
    if (descr.rfind(std::string("'") + code + "'", 0) == 0) type = t;
  if (type == ElementType::kUndefined) return Bad(path, "unsupported dtype");
  if (Field(header, "fortran_order").rfind("False", 0) != 0) return Bad(path, "Fortran order");
  const std::string shape_text = Field(header, "shape");
  const size_t open = shape_text.find('('), close = shape_text.find(')');
  if (open == std::string::npos || close == std::string::npos) return Bad(path, "no shape");
  std::vector<int64_t> shape;
  std::stringstream dims(shape_text.substr(open + 1, close - open - 1));
  for (std::string dim; std::getline(dims, dim, ',');) {
    if (dim.find_first_not_of(' ') == std::string::npos) continue;
    shape.push_back(std::stoll(dim));
  }

  auto tensor = attune::Tensor::Create(type, shape);
  if (!tensor.ok()) return tensor.status();
  if (!in.read(static_cast<char*>(tensor->raw_data()), static_cast<std::streamsize>(tensor->byte_size())))
    return Bad(path, "fewer data bytes than the shape needs");
  return tensor;
}

absl::Status WriteNpy(const std::string& path, const attune::Tensor& tensor) {
  const char* descr = nullptr;
  for (const auto& [code, t] : kDtypes)
    if (t == tensor.type()) descr = code;
  if (descr == nullptr) return absl::UnimplementedError(path + ": cannot write " + tensor.DebugString());
  std::string shape;  // "2, 3", or "2," for rank 1
  for (size_t i = 0; i < tensor.shape().size(); ++i) shape += (i > 0 ? ", " : "") + std::to_string(tensor.shape()[i]);
  if (tensor.rank() == 1) shape += ",";
  std::string header = std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (" + shape + "), }";
  const size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');

  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const uint16_t len = static_cast<uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(static_cast<const char*>(tensor.raw_data()), static_cast<std::streamsize>(tensor.byte_size()));
  if (!out) return absl::InternalError(path + ": write failed");
  return absl::OkStatus();
}

}  // namespace server
