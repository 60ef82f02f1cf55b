#include "tools/report_text.h"

#include <algorithm>
#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/schema/multi_head_attention.h"

namespace attune::cli {
namespace {

struct Style {
  bool on;
  std::string Bold(const std::string& s) const { return on ? "\033[1m" + s + "\033[0m" : s; }
  std::string Green(const std::string& s) const { return on ? "\033[32m" + s + "\033[0m" : s; }
  std::string Yellow(const std::string& s) const { return on ? "\033[33m" + s + "\033[0m" : s; }
  std::string Dim(const std::string& s) const { return on ? "\033[2m" + s + "\033[0m" : s; }
};

std::string ShapeText(const nlohmann::json& shape) {
  if (shape.is_null()) return "[?]";
  std::vector<std::string> dims;
  for (const auto& d : shape) dims.push_back(d.is_null() ? "?" : d.is_string() ? d.get<std::string>() : d.dump());
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

std::string HumanBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) return absl::StrFormat("%.2f GiB", bytes / double(int64_t{1} << 30));
  if (bytes >= (1 << 20)) return absl::StrFormat("%.2f MiB", bytes / double(1 << 20));
  if (bytes >= (1 << 10)) return absl::StrFormat("%.1f KiB", bytes / 1024.0);
  return absl::StrCat(bytes, " B");
}

std::string MaskText(const nlohmann::json& f) {
  const std::string mask = f["mask"];
  auto kind = mha::ParseMaskKind(mask);
  if (kind.ok() && mha::WithoutKeyPadding(*kind) == mha::MaskKind::kWindow)
    return absl::StrCat(mask, " ", f["window"].dump());
  return mask;
}

// "name: Op(in, in) -> out" per node, as report_json's "graph" lists them.
std::string GraphText(const nlohmann::json& nodes) {
  std::string out;
  for (const auto& n : nodes) {
    std::vector<std::string> inputs, outputs;
    for (const auto& v : n["inputs"]) inputs.push_back(EscapeControl(v.get<std::string>()));
    for (const auto& v : n["outputs"]) outputs.push_back(EscapeControl(v.get<std::string>()));
    const std::string op = n.contains("domain") ? absl::StrCat(n["domain"].get<std::string>(), ".",
                                                               n["op"].get<std::string>())
                                                : n["op"].get<std::string>();
    absl::StrAppend(&out, "  ", EscapeControl(n["name"].get<std::string>()), ": ", EscapeControl(op), "(",
                    absl::StrJoin(inputs, ", "), ") -> ", absl::StrJoin(outputs, ", "), "\n");
  }
  return out;
}

}  // namespace

std::string RenderTextReport(const nlohmann::json& r, bool colour) {
  const Style s{colour};
  std::string out;
  const auto& m = r["model"];
  absl::StrAppend(&out, s.Bold("Model"), "  ", m["path"].get<std::string>(), "\n");
  std::vector<std::string> opsets;
  for (const auto& [domain, version] : m["opsets"].items()) opsets.push_back(absl::StrCat(domain, " ", version.dump()));
  absl::StrAppendFormat(&out, "  %-12s %s\n", "producer", m["producer"].get<std::string>());
  absl::StrAppendFormat(&out, "  %-12s %s (ir %d)\n", "opsets", absl::StrJoin(opsets, ", "),
                        m["ir_version"].get<int64_t>());
  absl::StrAppendFormat(&out, "  %-12s %d in %d initializers (%s)\n", "parameters", m["parameters"].get<int64_t>(),
                        m["initializers"].get<int64_t>(), HumanBytes(m["parameter_bytes"].get<int64_t>()));
  for (const char* key : {"inputs", "outputs"}) {
    for (const auto& t : r[key])
      absl::StrAppendFormat(&out, "  %-12s %-24s %s%s\n", std::string(key) == "inputs" ? "input" : "output",
                            t["name"].get<std::string>(), t["dtype"].get<std::string>(), ShapeText(t["shape"]));
  }

  const bool stopped = r.contains("stopped_after") && r["stopped_after"].is_string();
  if (stopped)
    absl::StrAppend(&out, "\n", s.Yellow("Stopped"), " after the first run of pass ",
                    r["stopped_after"].get<std::string>(), ": what follows is the graph at that point\n");
  if (r.contains("iteration_cap_hit"))
    for (const auto& cap : r["iteration_cap_hit"])
      absl::StrAppend(&out, "\n", s.Yellow("Warning"), " stage ", cap["stage"].get<std::string>(),
                      " still changed the graph in round ", cap["rounds"].get<int>(),
                      ", its cap: it did not reach a fixed point\n");

  absl::StrAppend(&out, "\n", s.Bold("Ops"),
                  s.Dim(stopped ? absl::StrCat("  (before -> after passes up to ", r["stopped_after"].get<std::string>(),
                                               ")")
                                : "  (before -> after passes)"),
                  "\n");
  std::set<std::string> ops;
  for (const auto& [op, n] : r["ops_before"].items()) ops.insert(op);
  for (const auto& [op, n] : r["ops_after"].items()) ops.insert(op);
  int before_total = 0, after_total = 0;
  for (const std::string& op : ops) {
    const int before = r["ops_before"].value(op, 0), after = r["ops_after"].value(op, 0);
    before_total += before;
    after_total += after;
    std::string line = absl::StrFormat("  %-24s %6d -> %-6d", op, before, after);
    if (op == mha::kOpType) line = s.Green(line);
    else if (after == 0) line = s.Dim(line);
    absl::StrAppend(&out, line, "\n");
  }
  absl::StrAppendFormat(&out, "  %-24s %6d -> %-6d\n", "total", before_total, after_total);

  const nlohmann::json assumptions = r.value("assumptions", nlohmann::json::array());
  if (!assumptions.empty()) {
    absl::StrAppend(&out, "\n", s.Bold(absl::StrCat("Optimised under (", assumptions.size(), ")")),
                    s.Dim("  checked at every run; a run that breaks one runs the graph optimised without them"),
                    "\n");
    for (const auto& a : assumptions) absl::StrAppend(&out, "  ", a.get<std::string>(), "\n");
  }

  const auto& fusions = r["fusions"];
  absl::StrAppend(&out, "\n", s.Bold(absl::StrCat("Fusions (", fusions.size(), ")")), "\n");
  if (fusions.empty()) absl::StrAppend(&out, "  none", r["fuse"].get<bool>() ? "" : " (fusion disabled)", "\n");
  int index = 0;
  for (const auto& f : fusions) {
    const std::string status = f["undone"].get<bool>() ? s.Yellow(" [undone by verify]") : "";
    absl::StrAppendFormat(&out, "  #%d %s %s%s\n", ++index, s.Green(f["op"].get<std::string>()),
                          f["node"].get<std::string>(), status);
    absl::StrAppendFormat(&out, "     %-10s %s\n", "pattern", f["pattern"].get<std::string>());
    absl::StrAppendFormat(&out, "     %-10s %d (kv %d) x head_dim %d, scale %.6g\n", "heads", f["num_heads"].get<int64_t>(),
                          f["kv_num_heads"].get<int64_t>(), f["head_dim"].get<int64_t>(), f["scale"].get<double>());
    absl::StrAppendFormat(&out, "     %-10s %s%s, layout %s\n", "mask", MaskText(f),
                          f["has_past"].get<bool>() ? ", with past key/value" : "", f["q_layout"].get<std::string>());
    if (f.contains("key_padding") && f["key_padding"].is_string())
      absl::StrAppendFormat(&out, "     %-10s %s (0 pads a key)\n", "padding", f["key_padding"].get<std::string>());
    if (f.contains("sinks") && f["sinks"].is_string())
      absl::StrAppendFormat(&out, "     %-10s %s (a logit per head in the softmax's denominator)\n", "sinks",
                            f["sinks"].get<std::string>());
    if (f.contains("weights") && f["weights"].is_string())
      absl::StrAppendFormat(&out, "     %-10s %s (the probabilities, given as the fused op's output 3)\n", "weights",
                            f["weights"].get<std::string>());
    if (f.contains("max_kv_len") && f["max_kv_len"].is_number_integer())
      absl::StrAppendFormat(&out, "     %-10s %d keys (the model's mask buffer; longer inputs are refused)\n",
                            "max_kv_len", f["max_kv_len"].get<int64_t>());
    if (f.contains("bias") && f["bias"].is_string())
      absl::StrAppendFormat(&out, "     %-10s %s (a position bias added to the scores)\n", "bias",
                            f["bias"].get<std::string>());
    if (f.contains("verify_max_abs_error"))
      absl::StrAppendFormat(&out, "     %-10s max abs %.3g, max rel %.3g\n", "verified",
                            f["verify_max_abs_error"].get<double>(), f.value("verify_max_rel_error", 0.0));
    std::vector<std::string> replaced = f["replaced"];
    absl::StrAppendFormat(&out, "     %-10s %d nodes: %s\n", "replaced", replaced.size(), absl::StrJoin(replaced, ", "));
  }

  // Op fusions are many of a kind (one per layer): one line per op, rule
  // and attributes, with a count.
  const nlohmann::json op_fusions = r.value("op_fusions", nlohmann::json::array());
  std::map<std::string, int> kinds;
  int op_undone = 0;
  for (const auto& f : op_fusions) {
    if (f["undone"].get<bool>()) {
      ++op_undone;
      continue;
    }
    ++kinds[absl::StrFormat("%-18s %-12s %s", f["op"].get<std::string>(), f["pattern"].get<std::string>(),
                            f["attributes"].get<std::string>())];
  }
  absl::StrAppend(&out, "\n", s.Bold(absl::StrCat("Op fusions (", op_fusions.size() - op_undone, ")")), "\n");
  if (kinds.empty()) absl::StrAppend(&out, "  none", r["fuse"].get<bool>() ? "" : " (fusion disabled)", "\n");
  for (const auto& [kind, n] : kinds) absl::StrAppendFormat(&out, "  %4d x %s\n", n, kind);
  if (op_undone > 0) absl::StrAppendFormat(&out, "  %s\n", s.Yellow(absl::StrCat(op_undone, " undone by verify")));

  const auto& rejected = r["rejected"];
  absl::StrAppend(&out, "\n", s.Bold(absl::StrCat("Rejected candidates (", rejected.size(), ")")), "\n");
  if (rejected.empty()) absl::StrAppend(&out, "  none\n");
  size_t at_width = 4;
  for (const auto& c : rejected) at_width = std::max(at_width, c["at"].get<std::string>().size());
  for (const auto& c : rejected)
    absl::StrAppendFormat(&out, "  %-*s  %s: %s\n", static_cast<int>(at_width), c["at"].get<std::string>(),
                          s.Yellow(c["pattern"].get<std::string>()), c["reason"].get<std::string>());

  if (stopped && r.contains("graph")) {
    absl::StrAppend(&out, "\n", s.Bold(absl::StrCat("Graph after ", r["stopped_after"].get<std::string>(), " (",
                                                     r["graph"].size(), " nodes)")),
                    "\n", GraphText(r["graph"]));
  }

  if (r.contains("saved_model")) {
    const auto& saved = r["saved_model"];
    absl::StrAppend(&out, "\n", s.Bold("Saved model"), "  ", saved["path"].get<std::string>(), "\n");
    absl::StrAppendFormat(&out, "  %-12s %d written as ONNX Attention, %d kept as attune.MultiHeadAttention\n",
                          "attention", saved["attention_ops"].get<int>(),
                          static_cast<int>(saved["kept_as_multi_head_attention"].size()));
    if (saved.value("attention_subgraphs", 0) > 0)
      absl::StrAppendFormat(&out, "  %-12s %d written as the standard subgraph (attention sinks: ONNX Attention has "
                            "none)\n", "attention", saved["attention_subgraphs"].get<int>());
    if (saved.value("group_query_attention_ops", 0) > 0)
      absl::StrAppendFormat(&out, "  %-12s %d written back as com.microsoft.GroupQueryAttention, as they came\n",
                            "attention", saved["group_query_attention_ops"].get<int>());
    absl::StrAppendFormat(&out, "  %-12s ai.onnx %d -> %d\n", "opset", saved["default_opset_before"].get<int>(),
                          saved["default_opset"].get<int>());
    for (const auto& kept : saved["kept_as_multi_head_attention"])
      absl::StrAppendFormat(&out, "  %-12s %s: %s\n", "kept", kept["node"].get<std::string>(),
                            kept["reason"].get<std::string>());
    for (const auto& d : saved.value("nonfinite_differences", nlohmann::json::array()))
      absl::StrAppendFormat(&out, "  %-12s %s: %s\n", "non-finite", d["node"].get<std::string>(),
                            d["difference"].get<std::string>());
  }
  return out;
}

}  // namespace attune::cli
