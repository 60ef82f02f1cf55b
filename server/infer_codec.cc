#include "server/infer_codec.h"

#include "absl/strings/str_cat.h"
#include "server/datatype.h"
#include "server/tensor_codec.h"

namespace attune::server {
namespace {

using nlohmann::json;

absl::Status Bad(const std::string& message) { return absl::InvalidArgumentError(message); }

// A name from a request as an error message shows it: control characters
// replaced, at most 200 bytes (the message stays one readable line).
std::string Shown(std::string_view name) {
  std::string out(name.substr(0, 200));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  return name.size() > 200 ? out + "..." : out;
}

const TensorInfo* FindInfo(const std::vector<TensorInfo>& infos, const std::string& name) {
  for (const TensorInfo& i : infos)
    if (i.name == name) return &i;
  return nullptr;
}

constexpr size_t kMaxRank = 16;

absl::StatusOr<std::vector<int64_t>> ParseShape(const std::string& name, const json& shape) {
  if (!shape.is_array()) return Bad(absl::StrCat("input '", Shown(name), "': \"shape\" must be an array of integers"));
  if (shape.size() > kMaxRank) return Bad(absl::StrCat("input '", Shown(name), "': rank ", shape.size(), " is above 16"));
  std::vector<int64_t> dims;
  for (const json& d : shape) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0 ||
        (d.is_number_unsigned() && d.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)))
      return Bad(absl::StrCat("input '", Shown(name), "': shape dimension ", d.dump(), " is not a non-negative integer"));
    dims.push_back(d.get<int64_t>());
  }
  return dims;
}

// A parameter that asks for binary data: true, or a non-zero number.
bool Truthy(const json& v) { return v.is_boolean() ? v.get<bool>() : v.is_number() && v.get<double>() != 0; }

absl::StatusOr<std::optional<uint64_t>> BinarySize(const std::string& name, const json& input) {
  if (!input.contains("parameters")) return std::optional<uint64_t>();
  const json& p = input["parameters"];
  if (!p.is_object()) return Bad(absl::StrCat("input '", name, "': \"parameters\" must be an object"));
  if (!p.contains("binary_data_size")) return std::optional<uint64_t>();
  const json& size = p["binary_data_size"];
  if (!size.is_number_unsigned() && !(size.is_number_integer() && size.get<int64_t>() >= 0))
    return Bad(absl::StrCat("input '", name, "': binary_data_size must be a non-negative integer"));
  return std::optional<uint64_t>(size.get<uint64_t>());
}

absl::Status ParseOutputs(const json& doc, const std::vector<TensorInfo>& model_outputs, InferRequest& request) {
  if (!doc.contains("outputs")) return absl::OkStatus();
  const json& outputs = doc["outputs"];
  if (!outputs.is_array()) return Bad("\"outputs\" must be an array");
  for (const json& o : outputs) {
    if (!o.is_object() || !o.contains("name") || !o["name"].is_string())
      return Bad("each requested output needs a \"name\" string");
    const std::string name = o["name"].get<std::string>();
    bool binary = request.binary_output;
    if (o.contains("parameters")) {
      const json& p = o["parameters"];
      if (!p.is_object()) return Bad(absl::StrCat("output '", Shown(name), "': \"parameters\" must be an object"));
      if (p.contains("classification"))
        return Bad(absl::StrCat("output '", Shown(name), "': the classification extension is not supported"));
      if (p.contains("binary_data")) binary = Truthy(p["binary_data"]);
    }
    if (absl::Status ok = AddRequestedOutput(name, binary, model_outputs, request); !ok.ok()) return ok;
  }
  return absl::OkStatus();
}

}  // namespace

InputCollector::InputCollector(const std::vector<TensorInfo>& model_inputs, const CodecLimits& limits)
    : model_inputs_(model_inputs), limits_(limits), given_(model_inputs.size()) {}

absl::StatusOr<ElementType> InputCollector::Check(const std::string& name, std::string_view datatype,
                                                  const std::vector<int64_t>& shape) {
  const TensorInfo* info = FindInfo(model_inputs_, name);
  if (info == nullptr) return Bad(absl::StrCat("unknown input '", Shown(name), "'"));
  const size_t index = static_cast<size_t>(info - model_inputs_.data());
  if (given_[index]) return Bad(absl::StrCat("input '", name, "' given twice"));
  const std::optional<ElementType> type = ParseDatatype(datatype);
  if (!type) return Bad(absl::StrCat("input '", name, "': unknown datatype '", Shown(datatype), "'"));
  if (shape.size() > kMaxRank) return Bad(absl::StrCat("input '", name, "': rank ", shape.size(), " is above 16"));
  for (int64_t d : shape)
    if (d < 0) return Bad(absl::StrCat("input '", name, "': shape dimension ", d, " is negative"));
  if (absl::Status ok = CheckInputTensor(*info, *type, shape); !ok.ok()) return ok;
  if (auto bytes = CheckedTensorBytes(name, *type, shape, limits_.max_tensor_bytes); !bytes.ok()) return bytes.status();
  last_ = index;
  return *type;
}

void InputCollector::Put(Tensor tensor) { given_[last_] = std::move(tensor); }

absl::StatusOr<NamedTensors> InputCollector::Take() {
  NamedTensors inputs;
  for (size_t i = 0; i < model_inputs_.size(); ++i) {
    if (!given_[i]) return Bad(absl::StrCat("input '", model_inputs_[i].name, "' is missing"));
    inputs.emplace_back(model_inputs_[i].name, *std::move(given_[i]));
  }
  return inputs;
}

absl::Status AddRequestedOutput(const std::string& name, bool binary, const std::vector<TensorInfo>& model_outputs,
                                InferRequest& request) {
  if (FindInfo(model_outputs, name) == nullptr) return Bad(absl::StrCat("unknown output '", Shown(name), "'"));
  for (const RequestedOutput& r : request.outputs)
    if (r.name == name) return Bad(absl::StrCat("output '", name, "' requested twice"));
  request.outputs.push_back({name, binary});
  return absl::OkStatus();
}

absl::StatusOr<json> ParseJson(std::string_view text, const CodecLimits& limits) {
  if (JsonNestingDepth(text) > limits.max_json_depth)
    return Bad(absl::StrCat("JSON nested deeper than ", limits.max_json_depth, " levels"));
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return Bad("the body is not valid JSON (or not UTF-8)");
  return doc;
}

absl::Status CheckInputTensor(const TensorInfo& info, ElementType type, const std::vector<int64_t>& shape) {
  if (type != info.type)
    return Bad(absl::StrCat("input '", info.name, "': datatype ", DatatypeName(type), " given, the model takes ",
                            DatatypeName(info.type).empty() ? ElementTypeName(info.type) : DatatypeName(info.type)));
  if (!info.has_shape) return absl::OkStatus();
  bool fits = shape.size() == info.shape.size();
  for (size_t d = 0; fits && d < shape.size(); ++d) fits = info.shape[d] < 0 || info.shape[d] == shape[d];
  if (!fits)
    return Bad(absl::StrCat("input '", info.name, "': shape ", ShapeToString(shape), " given, the model takes ",
                            ShapeToString(info.shape), " (-1: any)"));
  return absl::OkStatus();
}

absl::StatusOr<InferRequest> ParseInferRequest(std::string_view body, std::optional<uint64_t> header_length,
                                               const std::vector<TensorInfo>& model_inputs,
                                               const std::vector<TensorInfo>& model_outputs,
                                               const CodecLimits& limits) {
  std::string_view header = body, binary;
  if (header_length) {
    if (*header_length > body.size())
      return Bad(absl::StrCat("Inference-Header-Content-Length ", *header_length, " exceeds the body's ",
                              body.size(), " bytes"));
    header = body.substr(0, *header_length);
    binary = body.substr(*header_length);
  }
  auto parsed = ParseJson(header, limits);
  if (!parsed.ok()) return parsed.status();
  const json& doc = *parsed;
  if (!doc.is_object()) return Bad("the inference request must be a JSON object");
  InferRequest request;
  if (doc.contains("id")) {
    if (!doc["id"].is_string()) return Bad("\"id\" must be a string");
    request.id = doc["id"].get<std::string>();
    request.has_id = true;
  }
  if (doc.contains("parameters")) {
    const json& p = doc["parameters"];
    if (!p.is_object()) return Bad("\"parameters\" must be an object");
    if (p.contains("binary_data_output")) request.binary_output = Truthy(p["binary_data_output"]);
    if (p.contains("timeout")) {
      if (!p["timeout"].is_number_unsigned()) return Bad("parameter \"timeout\" must be microseconds, an integer");
      request.timeout_ms = static_cast<int64_t>(std::min<uint64_t>(p["timeout"].get<uint64_t>() / 1000, INT64_MAX));
    }
  }
  if (!doc.contains("inputs") || !doc["inputs"].is_array()) return Bad("\"inputs\" must be an array");
  InputCollector collector(model_inputs, limits);
  size_t offset = 0;
  for (const json& in : doc["inputs"]) {
    if (!in.is_object()) return Bad("each input must be an object");
    if (!in.contains("name") || !in["name"].is_string()) return Bad("each input needs a \"name\" string");
    const std::string name = in["name"].get<std::string>();
    if (!in.contains("datatype") || !in["datatype"].is_string())
      return Bad(absl::StrCat("input '", name, "' needs a \"datatype\" string"));
    if (!in.contains("shape")) return Bad(absl::StrCat("input '", name, "' needs a \"shape\""));
    auto shape = ParseShape(name, in["shape"]);
    if (!shape.ok()) return shape.status();
    auto type = collector.Check(name, in["datatype"].get_ref<const std::string&>(), *shape);
    if (!type.ok()) return type.status();
    auto size = BinarySize(name, in);
    if (!size.ok()) return size.status();
    absl::StatusOr<Tensor> tensor;
    if (size->has_value()) {
      if (in.contains("data")) return Bad(absl::StrCat("input '", name, "' has both binary_data_size and \"data\""));
      if (**size > binary.size() - offset)
        return Bad(absl::StrCat("input '", name, "': binary_data_size ", **size, " exceeds the ",
                                binary.size() - offset, " bytes left in the body"));
      tensor = TensorFromBytes(name, binary.substr(offset, **size), *type, *shape, limits.max_tensor_bytes);
      offset += **size;
    } else {
      if (!in.contains("data")) return Bad(absl::StrCat("input '", name, "' has no \"data\""));
      tensor = TensorFromJson(name, in["data"], *type, *shape, limits.max_tensor_bytes);
    }
    if (!tensor.ok()) return tensor.status();
    collector.Put(*std::move(tensor));
  }
  if (offset != binary.size())
    return Bad(absl::StrCat("the body has ", binary.size() - offset, " bytes after the binary tensors"));
  auto inputs = collector.Take();
  if (!inputs.ok()) return inputs.status();
  request.inputs = *std::move(inputs);
  if (absl::Status ok = ParseOutputs(doc, model_outputs, request); !ok.ok()) return ok;
  return request;
}

absl::StatusOr<NamedTensors> SelectOutputs(const InferRequest& request, const NamedTensors& all) {
  if (request.outputs.empty()) return all;
  NamedTensors chosen;
  for (const RequestedOutput& r : request.outputs) {
    bool found = false;
    for (const auto& [name, t] : all)
      if (name == r.name) {
        chosen.emplace_back(name, t);
        found = true;
        break;
      }
    if (!found) return absl::InternalError(absl::StrCat("the model did not return output '", r.name, "'"));
  }
  return chosen;
}

EncodedResponse EncodeInferResponse(const std::string& model_name, const std::string& model_version,
                                    const InferRequest& request, const NamedTensors& outputs) {
  json doc = {{"model_name", model_name}, {"model_version", model_version}};
  if (request.has_id) doc["id"] = request.id;
  json out = json::array();
  std::string binary;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const auto& [name, t] = outputs[i];
    const bool as_binary = request.outputs.empty() ? request.binary_output : request.outputs[i].binary;
    json o = {{"name", name}, {"datatype", DatatypeName(t.type())}, {"shape", t.shape()}};
    if (as_binary) {
      o["parameters"] = {{"binary_data_size", t.byte_size()}};
      binary.append(TensorBytes(t));
    } else {
      o["data"] = TensorToJson(t);
    }
    out.push_back(std::move(o));
  }
  doc["outputs"] = std::move(out);
  EncodedResponse response;
  response.body = doc.dump(-1, ' ', false, json::error_handler_t::replace);
  if (request.binary_output || !binary.empty()) {
    response.header_length = response.body.size();
    response.body += binary;
  }
  return response;
}

}  // namespace attune::server
