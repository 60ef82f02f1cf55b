#include "tools/report_json.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace attune::cli {
namespace {

nlohmann::json TensorInfoToJson(const TensorInfo& info) {
  nlohmann::json shape = nullptr;
  if (info.has_shape) {
    shape = nlohmann::json::array();
    for (size_t i = 0; i < info.shape.size(); ++i) {
      if (info.shape[i] >= 0) shape.push_back(info.shape[i]);
      else if (!info.shape_symbols[i].empty()) shape.push_back(info.shape_symbols[i]);
      else shape.push_back(nullptr);
    }
  }
  return {{"name", info.name}, {"dtype", ElementTypeName(info.type)}, {"shape", shape}};
}

nlohmann::json FusionToJson(const FusionRecord& f) {
  nlohmann::json j = {{"op", f.op},
                      {"node", f.node},
                      {"pattern", f.pattern},
                      {"replaced", f.replaced},
                      {"num_heads", f.num_heads},
                      {"kv_num_heads", f.kv_num_heads},
                      {"head_dim", f.head_dim},
                      {"scale", f.scale},
                      {"causal", f.causal},
                      {"window", f.window > 0 ? nlohmann::json(f.window) : nlohmann::json(nullptr)},
                      {"mask", f.mask},
                      {"masked_rows", f.masked_rows.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.masked_rows)},
                      {"key_padding", f.key_padding.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.key_padding)},
                      {"bias", f.bias.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.bias)},
                      {"sinks", f.sinks.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.sinks)},
                      {"weights", f.weights.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.weights)},
                      {"max_kv_len", f.max_kv_len > 0 ? nlohmann::json(f.max_kv_len) : nlohmann::json(nullptr)},
                      {"q_layout", f.q_layout},
                      {"has_past", f.has_past},
                      {"undone", f.undone}};
  if (f.verify_max_abs_error) j["verify_max_abs_error"] = *f.verify_max_abs_error;
  if (f.verify_max_rel_error) j["verify_max_rel_error"] = *f.verify_max_rel_error;
  return j;
}

nlohmann::json OpFusionToJson(const OpFusionRecord& f) {
  nlohmann::json j = {{"op", f.op},
                      {"node", f.node},
                      {"pattern", f.pattern},
                      {"attributes", f.attributes},
                      {"replaced", f.replaced},
                      {"undone", f.undone}};
  if (f.verify_max_abs_error) j["verify_max_abs_error"] = *f.verify_max_abs_error;
  if (f.verify_max_rel_error) j["verify_max_rel_error"] = *f.verify_max_rel_error;
  return j;
}

// The graph's nodes in topological order: what inspect shows of a graph the
// pipeline stopped in, where op counts alone do not say what is connected.
nlohmann::json GraphToJson(const Graph& graph) {
  auto order = graph.TopologicalOrder();
  nlohmann::json nodes = nlohmann::json::array();
  for (const Node* n : order.ok() ? *order : graph.nodes()) {
    nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
    for (const Value* v : n->inputs()) inputs.push_back(v != nullptr ? v->name() : "");
    for (const Value* v : n->outputs()) outputs.push_back(v != nullptr ? v->name() : "");
    nlohmann::json node = {{"name", n->name()}, {"op", n->op_type()}, {"inputs", inputs}, {"outputs", outputs}};
    if (!n->domain().empty()) node["domain"] = n->domain();
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace

std::string TensorInfoToString(const TensorInfo& info) {
  if (!info.has_shape) return absl::StrCat(ElementTypeName(info.type), "[?]");
  std::vector<std::string> dims;
  for (size_t i = 0; i < info.shape.size(); ++i)
    dims.push_back(info.shape[i] >= 0 ? absl::StrCat(info.shape[i])
                                      : (info.shape_symbols[i].empty() ? "?" : info.shape_symbols[i]));
  return absl::StrCat(ElementTypeName(info.type), "[", absl::StrJoin(dims, ", "), "]");
}

nlohmann::json ReportToJson(const std::string& model_path, const SessionImpl& session) {
  const ModelSummary& m = session.model_summary();
  const FusionReport& r = session.report();
  nlohmann::json opsets = nlohmann::json::object();
  for (const auto& [domain, version] : m.opsets) opsets[domain.empty() ? "ai.onnx" : domain] = version;
  nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (const TensorInfo& t : session.inputs()) inputs.push_back(TensorInfoToJson(t));
  for (const TensorInfo& t : session.outputs()) outputs.push_back(TensorInfoToJson(t));
  nlohmann::json fusions = nlohmann::json::array(), op_fusions = nlohmann::json::array(),
                 rejected = nlohmann::json::array();
  for (const FusionRecord& f : r.fusions) fusions.push_back(FusionToJson(f));
  for (const OpFusionRecord& f : r.op_fusions) op_fusions.push_back(OpFusionToJson(f));
  for (const RejectedCandidate& c : r.rejected)
    rejected.push_back({{"at", c.at}, {"pattern", c.pattern}, {"reason", c.reason}});
  std::vector<std::string> passes;
  for (const std::string& p : r.passes_run)
    if (std::find(passes.begin(), passes.end(), p) == passes.end()) passes.push_back(p);
  nlohmann::json caps = nlohmann::json::array();
  for (const IterationCapHit& cap : r.iteration_cap_hit) caps.push_back({{"stage", cap.stage}, {"rounds", cap.rounds}});
  nlohmann::json report = {
      {"model",
       {{"path", model_path},
        {"producer", m.producer},
        {"ir_version", m.ir_version},
        {"opsets", opsets},
        {"nodes", m.num_nodes},
        {"initializers", m.num_initializers},
        {"parameters", m.num_parameters},
        {"parameter_bytes", m.parameter_bytes}}},
      {"inputs", inputs},
      {"outputs", outputs},
      {"fuse", session.options().fuse},
      {"ops_before", r.ops_before},
      {"ops_after", r.ops_after},
      {"fusions", fusions},
      {"op_fusions", op_fusions},
      {"rejected", rejected},
      {"passes", passes},
      {"iteration_cap_hit", caps},
      {"assumptions", r.assumptions},
      {"stopped_after", r.stopped_after.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.stopped_after)}};
  if (!r.stopped_after.empty()) report["graph"] = GraphToJson(session.graph());
  return report;
}

}  // namespace attune::cli
