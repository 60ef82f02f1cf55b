// Bytes through the server's inference request parser (server/infer_codec.h)
// for a model with an INT64 (batch, seq) input, an FP16 (4) input and a BOOL
// (-1) input. An odd first byte means the binary tensor data extension, with
// the JSON header's length in the next two bytes (little-endian). An accepted request must
// hold exactly the model's inputs in their types and declared dims, within
// the tensor limit; encoding a response from them must not fail.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "fuzz/server_request_check.h"
#include "server/infer_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attune;
  using namespace attune::server;
  if (size == 0) return 0;
  const std::vector<TensorInfo> inputs = fuzz::RequestModelInputs();
  const std::vector<TensorInfo> outputs = fuzz::RequestModelOutputs();
  CodecLimits limits;
  limits.max_tensor_bytes = 1 << 16;
  std::optional<uint64_t> header;
  size_t skip = 1;
  if (data[0] & 1) {
    if (size < 3) return 0;
    header = data[1] | (uint64_t{data[2]} << 8);
    skip = 3;
  }
  const std::string_view body(reinterpret_cast<const char*>(data) + skip, size - skip);
  absl::StatusOr<InferRequest> request = ParseInferRequest(body, header, inputs, outputs, limits);
  if (!request.ok()) {
    fuzz::CheckError(request.status(), "ParseInferRequest");
    return 0;
  }
  fuzz::CheckAcceptedRequest(*request, inputs, limits, "ParseInferRequest");
  NamedTensors fake = {{"out", request->inputs[0].second}};
  auto chosen = SelectOutputs(*request, fake);
  if (chosen.ok()) EncodeInferResponse("m", "1", *request, *chosen);
  return 0;
}
