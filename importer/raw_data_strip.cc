#include "importer/raw_data_strip.h"

namespace attune::importer {
namespace {

// Field numbers in onnx.proto.
constexpr uint32_t kModelGraph = 7;
constexpr uint32_t kGraphInitializer = 5;
constexpr uint32_t kTensorRawData = 9;

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// One field of a message, as offsets into the serialized bytes.
struct Field {
  uint32_t number = 0;
  uint32_t wire_type = 0;
  size_t start = 0;    // the tag's first byte
  size_t payload = 0;  // the first byte after the tag and, for kLengthDelimited, the length
  size_t end = 0;      // one past the field's last byte
  size_t length_start = 0;  // the first byte after the tag (kLengthDelimited: the length's)
};

// Reads a varint of at most `max_bytes` bytes at `*pos`, before `end`.
bool ReadVarint(std::string_view bytes, size_t* pos, size_t end, int max_bytes, uint64_t* value) {
  uint64_t result = 0;
  for (int i = 0; i < max_bytes; ++i) {
    if (*pos >= end) return false;
    const auto byte = static_cast<uint8_t>(bytes[(*pos)++]);
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      *value = result;
      return true;
    }
  }
  return false;
}

// Reads the field starting at `pos`, which must end at or before `end`. Groups
// and reserved wire types are refused: protobuf knows what to do with them.
bool ReadField(std::string_view bytes, size_t pos, size_t end, Field* field) {
  field->start = pos;
  uint64_t tag = 0;
  if (!ReadVarint(bytes, &pos, end, 5, &tag) || tag > UINT32_MAX || (tag >> 3) == 0) return false;
  field->number = static_cast<uint32_t>(tag >> 3);
  field->wire_type = static_cast<uint32_t>(tag & 7);
  field->length_start = pos;
  uint64_t skip = 0;
  switch (field->wire_type) {
    case kVarint: {
      uint64_t ignored = 0;
      if (!ReadVarint(bytes, &pos, end, 10, &ignored)) return false;
      break;
    }
    case kFixed64: skip = 8; break;
    case kFixed32: skip = 4; break;
    case kLengthDelimited:
      if (!ReadVarint(bytes, &pos, end, 10, &skip)) return false;
      break;
    default: return false;
  }
  field->payload = pos;
  if (skip > end - pos) return false;
  field->end = pos + static_cast<size_t>(skip);
  return true;
}

size_t VarintSize(uint64_t value) {
  size_t n = 1;
  for (; value >= 0x80; value >>= 7) ++n;
  return n;
}

void AppendVarint(uint64_t value, std::string* out) {
  for (; value >= 0x80; value >>= 7) out->push_back(static_cast<char>((value & 0x7f) | 0x80));
  out->push_back(static_cast<char>(value));
}

// An initializer whose raw_data is left out.
struct Cut {
  Field tensor;
  Field raw;
};

enum class RawData { kMalformed, kKeep, kCut };

// Whether the TensorProto `tensor` has exactly one raw_data field, non-empty
// (kCut, with it in `raw`); protobuf keeps the last of repeated raw_data
// fields, so such a tensor is kept whole, as is one without a payload.
RawData FindSoleRawData(std::string_view bytes, const Field& tensor, Field* raw) {
  int found = 0;
  for (size_t pos = tensor.payload; pos < tensor.end;) {
    Field f;
    if (!ReadField(bytes, pos, tensor.end, &f)) return RawData::kMalformed;
    if (f.number == kTensorRawData && f.wire_type == kLengthDelimited) {
      *raw = f;
      ++found;
    }
    pos = f.end;
  }
  return found == 1 && raw->end > raw->payload ? RawData::kCut : RawData::kKeep;
}

}  // namespace

std::optional<StrippedModel> StripInitializerRawData(std::string_view model) {
  Field graph;
  int graphs = 0;
  for (size_t pos = 0; pos < model.size();) {
    Field f;
    if (!ReadField(model, pos, model.size(), &f)) return std::nullopt;
    if (f.number == kModelGraph && f.wire_type == kLengthDelimited) {
      graph = f;
      ++graphs;
    }
    pos = f.end;
  }
  if (graphs != 1) return std::nullopt;

  StrippedModel stripped;
  std::vector<Cut> cuts;
  size_t removed = 0;  // bytes the graph's payload loses
  for (size_t pos = graph.payload; pos < graph.end;) {
    Field f;
    if (!ReadField(model, pos, graph.end, &f)) return std::nullopt;
    pos = f.end;
    if (f.number != kGraphInitializer || f.wire_type != kLengthDelimited) continue;
    Field raw;
    const RawData found = FindSoleRawData(model, f, &raw);
    if (found == RawData::kMalformed) return std::nullopt;
    if (found == RawData::kKeep) {
      stripped.raw_data.push_back(std::nullopt);
      continue;
    }
    stripped.raw_data.push_back(
        RawDataSpan{static_cast<int64_t>(raw.payload), static_cast<int64_t>(raw.end - raw.payload)});
    const size_t old_size = f.end - f.payload;
    const size_t new_size = old_size - (raw.end - raw.start);
    removed += (raw.end - raw.start) + (f.payload - f.length_start) - VarintSize(new_size);
    cuts.push_back({f, raw});
  }
  if (cuts.empty()) return std::nullopt;

  // The model up to the graph's length, the graph's new length, then its
  // fields with each cut tensor's length rewritten and raw_data left out.
  const size_t graph_size = graph.end - graph.payload - removed;
  std::string& out = stripped.bytes;
  out.reserve(model.size() - (graph.end - graph.payload) + graph_size + 10);
  out.append(model.substr(0, graph.length_start));
  AppendVarint(graph_size, &out);
  size_t copied = graph.payload;  // model bytes before this are in `out`
  for (const Cut& c : cuts) {
    out.append(model.substr(copied, c.tensor.length_start - copied));
    AppendVarint(c.tensor.end - c.tensor.payload - (c.raw.end - c.raw.start), &out);
    out.append(model.substr(c.tensor.payload, c.raw.start - c.tensor.payload));
    copied = c.raw.end;
  }
  out.append(model.substr(copied));
  return stripped;
}

}  // namespace attune::importer
