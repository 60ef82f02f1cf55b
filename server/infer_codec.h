// The inference request and response of the Open Inference Protocol over
// REST: the JSON object, with the binary tensor data extension (a JSON
// header of Inference-Header-Content-Length bytes, then each binary tensor's
// bytes in order).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "attune/session.h"
#include "nlohmann/json.hpp"

namespace attune::server {

struct CodecLimits {
  int64_t max_tensor_bytes = int64_t{256} << 20;
  int max_json_depth = 64;
};

struct RequestedOutput {
  std::string name;
  bool binary = false;
};

struct InferRequest {
  std::string id;
  bool has_id = false;
  NamedTensors inputs;                   // in the model's input order
  std::vector<RequestedOutput> outputs;  // empty: every output, as JSON unless binary_data_output
  bool binary_output = false;            // the request parameter binary_data_output
  int64_t timeout_ms = 0;                // the request parameter "timeout" in microseconds, as Triton; 0 = none
};

/// The inputs of a request as its decoder reads them (REST's JSON or gRPC's
/// message), checked against the model the same way whatever the encoding.
class InputCollector {
 public:
  InputCollector(const std::vector<TensorInfo>& model_inputs, const CodecLimits& limits);
  /// Checks an input's header: an input of the model, given once, a known
  /// datatype the model takes, a shape (rank at most 16, no negative dim)
  /// that fits the model's, within the tensor limit. Returns its element type.
  absl::StatusOr<ElementType> Check(const std::string& name, std::string_view datatype,
                                    const std::vector<int64_t>& shape);
  /// Stores the tensor of the input last checked.
  void Put(Tensor tensor);
  /// The inputs in the model's order; InvalidArgument naming a missing one.
  absl::StatusOr<NamedTensors> Take();

 private:
  const std::vector<TensorInfo>& model_inputs_;
  const CodecLimits& limits_;
  std::vector<std::optional<Tensor>> given_;
  size_t last_ = 0;
};

/// Adds a requested output: an output of the model, asked for once.
absl::Status AddRequestedOutput(const std::string& name, bool binary, const std::vector<TensorInfo>& model_outputs,
                                InferRequest& request);

/// Parses a JSON document, refusing nesting deeper than the limit (the parser recurses).
absl::StatusOr<nlohmann::json> ParseJson(std::string_view text, const CodecLimits& limits);

/// Parses and validates an inference request for a model with these inputs
/// and outputs. `header_length` is the Inference-Header-Content-Length, when
/// given. InvalidArgument (HTTP 400) naming the field for anything wrong.
absl::StatusOr<InferRequest> ParseInferRequest(std::string_view body, std::optional<uint64_t> header_length,
                                               const std::vector<TensorInfo>& model_inputs,
                                               const std::vector<TensorInfo>& model_outputs,
                                               const CodecLimits& limits);

/// Checks a tensor given for a model input: its datatype and the dims the model fixes.
absl::Status CheckInputTensor(const TensorInfo& info, ElementType type, const std::vector<int64_t>& shape);

struct EncodedResponse {
  std::string body;
  std::optional<uint64_t> header_length;  // set when binary tensors follow the JSON
};

/// The response object for `outputs` (already filtered and ordered as requested).
EncodedResponse EncodeInferResponse(const std::string& model_name, const std::string& model_version,
                                    const InferRequest& request, const NamedTensors& outputs);

/// The outputs a request asked for, in its order (every output when it named none).
absl::StatusOr<NamedTensors> SelectOutputs(const InferRequest& request, const NamedTensors& all);

}  // namespace attune::server
