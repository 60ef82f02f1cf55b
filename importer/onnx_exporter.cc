#include "importer/onnx_exporter.h"

#include <algorithm>
#include <climits>
#include <fstream>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "importer/proto_attribute.h"
#include "importer/proto_tensor.h"
#include "importer/proto_type.h"
#include "onnx/onnx_pb.h"

namespace attune {
namespace {

constexpr char kAttuneDomain[] = "attune";

void WriteValueInfo(const Value& value, onnx::ValueInfoProto* proto) {
  proto->set_name(value.name());
  if (value.type() != ElementType::kUndefined || value.shape())
    importer::WriteTensorType(value.type(), value.shape(), proto->mutable_type());
}

// The smallest IR version that goes with the default-domain opset (at least 8).
int64_t IrVersionFor(int default_opset) { return default_opset >= 23 ? 10 : 8; }

absl::StatusOr<std::map<std::string, int>> OpsetsFor(const Graph& graph, const std::vector<Node*>& nodes) {
  std::map<std::string, int> opsets = graph.opsets();
  for (const Node* node : nodes) {
    if (opsets.contains(node->domain())) continue;
    if (node->domain().empty())
      return absl::FailedPreconditionError(
          absl::StrCat("cannot export: ", node->Describe(), " is in the default ONNX domain but the graph has no "
                       "opset for it"));
    // Attune's own ops (and any domain a pass introduced) are version 1.
    opsets[node->domain()] = 1;
  }
  return opsets;
}

absl::Status BuildModel(const Graph& graph, onnx::ModelProto* model) {
  ASSIGN_OR_RETURN(std::vector<Node*> nodes, graph.TopologicalOrder());
  ASSIGN_OR_RETURN(auto opsets, OpsetsFor(graph, nodes));
  for (const auto& [domain, version] : opsets) {
    onnx::OperatorSetIdProto* opset = model->add_opset_import();
    opset->set_domain(domain);
    opset->set_version(version);
  }
  const int default_opset = opsets.contains("") ? opsets.at("") : 0;
  model->set_ir_version(std::max(graph.ir_version, IrVersionFor(default_opset)));
  model->set_producer_name(graph.producer_name.empty() ? kAttuneDomain : graph.producer_name);
  if (!graph.producer_version.empty()) model->set_producer_version(graph.producer_version);
  for (const auto& [key, value] : graph.metadata) {
    onnx::StringStringEntryProto* entry = model->add_metadata_props();
    entry->set_key(key);
    entry->set_value(value);
  }

  onnx::GraphProto* g = model->mutable_graph();
  g->set_name(graph.graph_name.empty() ? "attune" : graph.graph_name);
  for (const Value* input : graph.inputs()) WriteValueInfo(*input, g->add_input());

  absl::flat_hash_set<const Value*> written;
  // A released constant (packed weights, held by their kernel) is written as
  // the model had it, restored one at a time.
  auto write_constant = [&](const Value* v) -> absl::Status {
    if (v == nullptr || !v->is_constant() || !written.insert(v).second) return absl::OkStatus();
    ASSIGN_OR_RETURN(Tensor data, ConstantData(*v));
    importer::TensorToProto(data, v->name(), g->add_initializer());
    return absl::OkStatus();
  };
  for (const Node* node : nodes)
    for (const Value* in : node->inputs()) RETURN_IF_ERROR(write_constant(in));
  for (const Value* out : graph.outputs()) RETURN_IF_ERROR(write_constant(out));

  for (const Node* node : nodes) {
    if (node->has_subgraphs())
      return absl::UnimplementedError(absl::StrCat("node ", node->Describe(),
                                                   " has subgraphs, which saving a model does not support yet"));
    onnx::NodeProto* n = g->add_node();
    n->set_name(node->name());
    n->set_op_type(node->op_type());
    if (!node->domain().empty()) n->set_domain(node->domain());
    int last_input = node->num_inputs();
    while (last_input > 0 && node->input(last_input - 1) == nullptr) --last_input;
    for (int i = 0; i < last_input; ++i) n->add_input(node->input(i) ? node->input(i)->name() : "");
    for (const Value* out : node->outputs()) n->add_output(out ? out->name() : "");
    for (const auto& [name, value] : node->attributes().all())
      importer::AttributeToProto(name, value, n->add_attribute());
    for (const Value* out : node->outputs()) {
      if (out == nullptr || out->is_graph_output()) continue;
      if (out->type() != ElementType::kUndefined || out->shape()) WriteValueInfo(*out, g->add_value_info());
    }
  }
  for (const Value* output : graph.outputs()) WriteValueInfo(*output, g->add_output());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::string> ExportModelToBytes(const Graph& graph) {
  onnx::ModelProto model;
  RETURN_IF_ERROR(BuildModel(graph, &model));
  if (model.ByteSizeLong() > static_cast<size_t>(INT_MAX))
    return absl::ResourceExhaustedError(absl::StrCat("exported model would be ", model.ByteSizeLong(),
                                                     " bytes, above protobuf's 2 GB limit"));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) return absl::InternalError("serializing the ONNX model failed");
  return bytes;
}

absl::Status ExportModelToFile(const Graph& graph, const std::string& path) {
  ASSIGN_OR_RETURN(std::string bytes, ExportModelToBytes(graph));
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  if (!file) return absl::InvalidArgumentError(absl::StrCat("cannot write ", QuoteName(path)));
  file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  file.close();
  if (!file) return absl::InternalError(absl::StrCat("writing ", QuoteName(path), " failed"));
  return absl::OkStatus();
}

}  // namespace attune
