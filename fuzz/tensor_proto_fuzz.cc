// Serialized TensorProto bytes (.pb input files) through TensorFromProtoBytes
// (importer/tensor_proto.h) with a 1 MiB tensor limit. An accepted tensor must
// serialise and parse back to the same tensor; a refusal must obey fuzz_check.h.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "fuzz/tensor_compare.h"
#include "importer/tensor_proto.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attune;
  ImportOptions options;
  options.max_tensor_bytes = int64_t{1} << 20;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Tensor> parsed = TensorFromProtoBytes(bytes, options);
  if (!parsed.ok()) {
    fuzz::CheckError(parsed.status(), "TensorFromProtoBytes");
    return 0;
  }
  if (parsed->byte_size() > static_cast<size_t>(options.max_tensor_bytes))
    fuzz::Fail("TensorFromProtoBytes: a tensor above max_tensor_bytes");
  absl::StatusOr<std::string> written = TensorToProtoBytes(*parsed, "t");
  if (!written.ok()) {
    // Not every element type has a raw_data form; that refusal must still be a clean error.
    fuzz::CheckError(written.status(), "TensorToProtoBytes");
    return 0;
  }
  absl::StatusOr<Tensor> again = TensorFromProtoBytes(*written, options);
  if (!again.ok()) fuzz::Fail("TensorFromProtoBytes refused TensorToProtoBytes' output: " + again.status().ToString());
  if (!fuzz::SameTensor(*parsed, *again)) fuzz::Fail("TensorProto round trip changed the tensor");
  return 0;
}
