// Bytes as a gRPC ModelInferRequest (server/grpc/inference.proto) through the
// server's gRPC request parser (server/grpc/grpc_codec.h), for the model of
// infer_request_fuzz.cc: an INT64 (batch, seq) input, an FP16 (4) input and a
// BOOL (-1) input. Bytes that are not a message are the transport's concern;
// a message the parser accepts must hold exactly the model's inputs in their
// types and declared dims, within the tensor limit, and encode a response in
// both forms.
#include <cstddef>
#include <cstdint>

#include "fuzz/server_request_check.h"
#include "server/grpc/grpc_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attune;
  using namespace attune::server;
  inference::ModelInferRequest message;
  if (!message.ParseFromArray(data, static_cast<int>(size))) return 0;
  const std::vector<TensorInfo> inputs = fuzz::RequestModelInputs();
  const std::vector<TensorInfo> outputs = fuzz::RequestModelOutputs();
  CodecLimits limits;
  limits.max_tensor_bytes = 1 << 16;
  absl::StatusOr<InferRequest> request = ParseGrpcInferRequest(message, inputs, outputs, limits);
  if (!request.ok()) {
    fuzz::CheckError(request.status(), "ParseGrpcInferRequest");
    return 0;
  }
  fuzz::CheckAcceptedRequest(*request, inputs, limits, "ParseGrpcInferRequest");
  NamedTensors fake = {{"out", request->inputs[0].second}, {"flag", request->inputs[2].second}};
  for (bool binary : {true, false}) {
    request->binary_output = binary;
    inference::ModelInferResponse response;
    EncodeGrpcInferResponse("m", "1", *request, fake, response);
    if (response.outputs_size() != 2) fuzz::Fail("EncodeGrpcInferResponse: an output lost");
  }
  return 0;
}
