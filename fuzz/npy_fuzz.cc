// .npy bytes through ParseNpy (engine/io/npy.h) with a 1 MiB tensor limit. An
// accepted tensor must serialise and parse back to the same tensor; a refusal
// must obey fuzz_check.h.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/io/npy.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/tensor_compare.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attune;
  constexpr int64_t kMaxBytes = int64_t{1} << 20;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<Tensor> parsed = ParseNpy(bytes, kMaxBytes);
  if (!parsed.ok()) {
    fuzz::CheckError(parsed.status(), "ParseNpy");
    return 0;
  }
  if (parsed->byte_size() > static_cast<size_t>(kMaxBytes)) fuzz::Fail("ParseNpy: a tensor above max_bytes");
  absl::StatusOr<std::string> written = SerializeNpy(*parsed);
  if (!written.ok()) fuzz::Fail("SerializeNpy refused a tensor ParseNpy made: " + written.status().ToString());
  absl::StatusOr<Tensor> again = ParseNpy(*written, kMaxBytes);
  if (!again.ok()) fuzz::Fail("ParseNpy refused SerializeNpy's output: " + again.status().ToString());
  if (!fuzz::SameTensor(*parsed, *again)) fuzz::Fail("npy round trip changed the tensor");
  return 0;
}
