// The model the server's request-parser fuzz targets parse for, and what an
// accepted request must hold (infer_request_fuzz.cc over REST's bytes,
// grpc_request_fuzz.cc over gRPC's message).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "server/infer_codec.h"

namespace attune::fuzz {

/// An INT64 (batch, seq) input, an FP16 (4) input and a BOOL (-1) input.
inline std::vector<TensorInfo> RequestModelInputs() {
  return {{"ids", ElementType::kInt64, {-1, -1}, {"batch", "seq"}, true},
          {"half", ElementType::kFloat16, {4}, {""}, true},
          {"flag", ElementType::kBool, {-1}, {"n"}, true}};
}
inline std::vector<TensorInfo> RequestModelOutputs() { return {{"out", ElementType::kFloat32, {-1}, {"n"}, true}}; }

/// An accepted request holds exactly the model's inputs in their types and
/// declared dims, within the tensor limit.
inline void CheckAcceptedRequest(const server::InferRequest& request, const std::vector<TensorInfo>& inputs,
                                 const server::CodecLimits& limits, const std::string& parser) {
  if (request.inputs.size() != inputs.size()) Fail(parser + ": inputs missing");
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = request.inputs[i].second;
    if (request.inputs[i].first != inputs[i].name || t.type() != inputs[i].type ||
        t.rank() != static_cast<int64_t>(inputs[i].shape.size()))
      Fail(parser + ": an input of the wrong name, type or rank");
    if (t.byte_size() > static_cast<size_t>(limits.max_tensor_bytes)) Fail(parser + ": above the limit");
    if (inputs[i].name == "half" && t.shape()[0] != 4) Fail(parser + ": a fixed dim not checked");
  }
}

}  // namespace attune::fuzz
