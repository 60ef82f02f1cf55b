// The inference request and response of the Open Inference Protocol over
// gRPC (inference.proto): a ModelInferRequest read into the same
// InferRequest as REST's, through the same checks (InputCollector), and the
// outputs written as raw contents or typed contents.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "server/grpc/inference.pb.h"
#include "server/infer_codec.h"

namespace attune::server {

/// Reads and validates a ModelInferRequest for a model with these inputs and
/// outputs. Inputs come from raw_input_contents (one entry per input, in
/// order) or from each input's typed contents, never both. Request
/// parameters: "timeout" (microseconds, int64) and "binary_data_output"
/// (bool, default true: outputs as raw_output_contents). InvalidArgument
/// naming the input or field for anything wrong.
absl::StatusOr<InferRequest> ParseGrpcInferRequest(const inference::ModelInferRequest& message,
                                                   const std::vector<TensorInfo>& model_inputs,
                                                   const std::vector<TensorInfo>& model_outputs,
                                                   const CodecLimits& limits);

/// The response for `outputs` (already selected and ordered): raw contents
/// when the request asked for binary output (or an output has no typed field,
/// FP16 and BF16), else typed contents.
void EncodeGrpcInferResponse(const std::string& model_name, const std::string& model_version,
                             const InferRequest& request, const NamedTensors& outputs,
                             inference::ModelInferResponse& response);

}  // namespace attune::server
