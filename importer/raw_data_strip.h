// Internal to importer/: finds the initializers' raw_data payloads in a
// serialized ModelProto and leaves them out of the bytes protobuf parses, so
// that a model mapped from its file is parsed without copying its weights.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace attune::importer {

/// Where one initializer's raw_data payload lies in the serialized model.
struct RawDataSpan {
  int64_t offset = 0;
  int64_t size = 0;
};

/// A serialized ModelProto with some initializers' raw_data fields left out.
struct StrippedModel {
  /// Parses to the same message as the original, except that each initializer
  /// with a span below has no raw_data.
  std::string bytes;
  /// By index in GraphProto.initializer: the payload that was left out, or
  /// nullopt where the initializer keeps its fields as they were.
  std::vector<std::optional<RawDataSpan>> raw_data;
};

/// Walks the wire format along ModelProto.graph (7) -> GraphProto.initializer
/// (5) -> TensorProto.raw_data (9) and leaves out every non-empty raw_data
/// that is the only one in its tensor. Every length is checked against the
/// bytes left and every varint bounded; nullopt when anything is unexpected
/// (a malformed field, a group, the graph given twice, which protobuf would
/// merge) or nothing would be left out. The caller then parses `model` whole,
/// which gives protobuf's own verdict on it.
std::optional<StrippedModel> StripInitializerRawData(std::string_view model);

}  // namespace attune::importer
