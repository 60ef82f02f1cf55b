#include "tools/report_dot.h"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/schema/multi_head_attention.h"
#include "tools/dot_folding.h"

namespace attune::cli {
namespace {

constexpr char kSmall[] = "<font point-size=\"8\" color=\"#555555\">";

// Text for an HTML-like label.
std::string Html(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\n': out += ' '; break;
      default: out += c;
    }
  }
  return out;
}

// Text for a quoted DOT string.
std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + "\"";
}

std::string TypeShape(const Value& v) {
  std::string text = v.type() == ElementType::kUndefined ? "" : ElementTypeName(v.type());
  if (v.shape()) absl::StrAppend(&text, SymbolicShapeToString(*v.shape()));
  return text;
}

// "[0, 2, 1, 3]" for a small integer or float constant, else "".
std::string SmallValues(const Tensor* constant) {
  if (constant == nullptr || constant->num_elements() > 8) return "";  // released data is large
  const Tensor& t = *constant;
  std::vector<std::string> items;
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    switch (t.type()) {
      case ElementType::kInt64: items.push_back(absl::StrCat(t.data<int64_t>()[i])); break;
      case ElementType::kInt32: items.push_back(absl::StrCat(t.data<int32_t>()[i])); break;
      case ElementType::kFloat32: items.push_back(absl::StrFormat("%g", t.data<float>()[i])); break;
      case ElementType::kFloat64: items.push_back(absl::StrFormat("%g", t.data<double>()[i])); break;
      default: return "";
    }
  }
  const std::string joined = absl::StrJoin(items, ", ");
  return t.rank() == 0 ? joined : absl::StrCat("[", joined, "]");
}

// Comma-separated names broken into lines of about `width` characters.
std::string Wrapped(const std::vector<std::string>& names, size_t width) {
  std::string out, line;
  for (size_t i = 0; i < names.size(); ++i) {
    std::string item = names[i] + (i + 1 < names.size() ? ", " : "");
    if (!line.empty() && line.size() + item.size() > width) {
      absl::StrAppend(&out, Html(line), "<br align=\"left\"/>");
      line.clear();
    }
    line += item;
  }
  if (!line.empty()) absl::StrAppend(&out, Html(line), "<br align=\"left\"/>");
  return out;
}

std::string OpCounts(const std::map<std::string, int>& counts) {
  std::vector<std::string> parts;
  for (const auto& [op, n] : counts) parts.push_back(n > 1 ? absl::StrCat(op, " x", n) : op);
  return absl::StrJoin(parts, ", ");
}

bool IsFusedAttention(const Node& node) {
  return mha::IsMultiHeadAttention(node) ||
         (node.domain().empty() && node.op_type() == "Attention");
}

class DotWriter {
 public:
  DotWriter(const Graph& graph, const FusionReport& report, const DotOptions& options)
      : graph_(graph), report_(report), options_(options) {}

  std::string Render() {
    auto order = graph_.TopologicalOrder();
    nodes_ = order.ok() ? *order : graph_.nodes();
    if (!options_.show_all) {
      hidden_ = ShapeOnlyNodes(graph_);
      layers_ = FoldRepeatedLayers(nodes_, hidden_);
    }
    for (const FusionRecord& f : report_.fusions) fusions_[f.node] = &f;
    for (const RejectedCandidate& c : report_.rejected) rejected_[c.at].push_back(&c);
    for (size_t i = 0; i < nodes_.size(); ++i)
      ids_[nodes_[i]] = absl::StrCat(IsFusedAttention(*nodes_[i]) ? "fused_" : "op_", i);

    absl::StrAppend(&out_, "digraph attune {\n");
    absl::StrAppend(&out_, "  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, labelloc=t, label=<",
                    Caption(), ">];\n");
    absl::StrAppend(&out_,
                    "  node [shape=box, style=\"rounded,filled\", fillcolor=\"#f2f2f2\", color=\"#888888\", "
                    "fontname=\"Helvetica\", fontsize=10];\n");
    absl::StrAppend(&out_, "  edge [fontname=\"Helvetica\", fontsize=8, color=\"#666666\", fontcolor=\"#444444\"];\n");
    for (size_t i = 0; i < graph_.inputs().size(); ++i) {
      const Value* v = graph_.inputs()[i];
      absl::StrAppend(&out_, "  input_", i, " [shape=ellipse, fillcolor=\"#d6eaff\", label=<<b>", Html(v->name()),
                      "</b><br/>", kSmall, Html(TypeShape(*v)), "</font>>];\n");
    }
    for (const Node* node : nodes_) {
      if (hidden_.contains(node) || layers_.group_of.contains(node)) continue;
      WriteNode(*node);
    }
    for (size_t g = 0; g < layers_.groups.size(); ++g) WriteLayerGroup(g);
    for (const Node* node : nodes_)
      if (!hidden_.contains(node)) WriteInputEdges(*node);
    for (size_t i = 0; i < graph_.outputs().size(); ++i) {
      const Value* v = graph_.outputs()[i];
      absl::StrAppend(&out_, "  output_", i, " [shape=ellipse, fillcolor=\"#d9f2d9\", label=<<b>", Html(v->name()),
                      "</b><br/>", kSmall, Html(TypeShape(*v)), "</font>>];\n");
      const std::string from = SourceOf(*v);
      if (!from.empty()) Edge(from, absl::StrCat("output_", i), TypeShape(*v), "", v->name());
    }
    absl::StrAppend(&out_, "}\n");
    return out_;
  }

 private:
  std::string Caption() const {
    std::string text = Html(options_.title.empty() ? "attune" : options_.title);
    int drawn = 0;
    for (const Node* n : nodes_) drawn += !hidden_.contains(n) && !layers_.group_of.contains(n);
    absl::StrAppend(&text, "<br/>", kSmall, nodes_.size(), " nodes");
    std::vector<std::string> folded;
    if (!hidden_.empty()) folded.push_back(absl::StrCat(hidden_.size(), " shape computations"));
    if (!layers_.group_of.empty()) folded.push_back(absl::StrCat(layers_.group_of.size(), " nodes of repeated layers"));
    if (!folded.empty())
      absl::StrAppend(&text, ", ", drawn, " drawn (folded: ", absl::StrJoin(folded, ", "),
                      "; --show-all draws every node)");
    absl::StrAppend(&text, "</font>");
    return text;
  }

  void WriteNode(const Node& node) {
    std::string label = absl::StrCat("<b>", Html(node.domain().empty() ? node.op_type()
                                                                          : node.domain() + "." + node.op_type()),
                                     "</b><br/>", kSmall, Html(node.name()), "</font>");
    std::string style;
    if (IsFusedAttention(node)) {
      label += AttentionDetails(node);
      style = ", fillcolor=\"#ffd27a\", color=\"#b36b00\", penwidth=2";
    }
    if (!options_.show_all) {
      for (int i = 0; i < node.num_inputs(); ++i) {
        const Value* in = node.input(i);
        if (in == nullptr || !in->is_constant()) continue;
        const std::string values = SmallValues(in->constant());
        absl::StrAppend(&label, "<br/>", kSmall, "#", i, " ",
                        Html(values.empty() ? TypeShape(*in) : "= " + values), "</font>");
      }
    }
    // Candidates rejected at this node, or (for a fused node) at a node it
    // replaced, e.g. "not fused as causal" before an explicit-mask fusion.
    std::vector<std::string> anchors = {node.name()};
    if (auto it = fusions_.find(node.name()); it != fusions_.end())
      anchors.insert(anchors.end(), it->second->replaced.begin(), it->second->replaced.end());
    for (const std::string& anchor : anchors) {
      auto it = rejected_.find(anchor);
      if (it == rejected_.end()) continue;
      for (const RejectedCandidate* c : it->second) {
        std::string reason = c->reason.size() > 90 ? c->reason.substr(0, 87) + "..." : c->reason;
        const bool prefixed = reason.rfind("not fused", 0) == 0;
        absl::StrAppend(&label, "<br/><font point-size=\"8\" color=\"#b00000\">", Html(c->pattern), ": ",
                        prefixed ? "" : "not fused: ", Html(reason), "</font>");
      }
      if (style.empty()) style = ", color=\"#b00000\", penwidth=2";
    }
    absl::StrAppend(&out_, "  ", ids_.at(&node), " [label=<", label, ">", style, "];\n");
  }

  std::string AttentionDetails(const Node& node) const {
    const Attributes& a = node.attributes();
    const bool onnx = node.domain().empty();
    // ONNX Attention shares kv_num_heads, scale and softcap with MultiHeadAttention, and has no window.
    const int64_t heads = a.GetInt(onnx ? "q_num_heads" : mha::kNumHeads, 0).value_or(0);
    const int64_t kv_heads = a.GetInt(mha::kKvNumHeads, heads).value_or(heads);
    const bool causal = a.GetInt(onnx ? "is_causal" : mha::kCausal, 0).value_or(0) != 0;
    const int64_t window = a.GetInt(mha::kWindow, 0).value_or(0);
    const float softcap = a.GetFloat(mha::kSoftcap, 0.0f).value_or(0.0f);
    const FusionRecord* record = nullptr;
    if (auto it = fusions_.find(node.name()); it != fusions_.end()) record = it->second;
    const mha::MaskKind kind = node.input(mha::kInputMask) ? mha::MaskKind::kExplicit
                               : causal                   ? mha::MaskKind::kCausal
                                                          : mha::MaskKind::kNone;
    std::string mask = record ? record->mask : std::string(mha::ToString(kind));
    if (window > 0) mask = absl::StrCat("causal, window ", window);
    std::string text = absl::StrCat("<br/>heads ", heads > 0 ? absl::StrCat(heads) : "?", " (kv ",
                                    kv_heads > 0 ? absl::StrCat(kv_heads) : "?", ")");
    if (record) absl::StrAppend(&text, " x head dim ", record->head_dim);
    if (a.Has(mha::kScale)) absl::StrAppendFormat(&text, ", scale %.6g", a.GetFloat(mha::kScale).value_or(0.0f));
    absl::StrAppend(&text, "<br/>mask ", Html(mask));
    if (softcap > 0) absl::StrAppendFormat(&text, ", softcap %g", softcap);
    if (node.input(mha::kInputPastKey) != nullptr) absl::StrAppend(&text, ", past key/value");
    if (record) {
      absl::StrAppend(&text, ", layout ", Html(record->q_layout));
      if (record->undone) absl::StrAppend(&text, " (undone by verify)");
      absl::StrAppend(&text, "<br/>", kSmall, "replaced ", record->replaced.size(), " nodes:<br align=\"left\"/>",
                      Wrapped(record->replaced, 70), "</font>");
    }
    return text;
  }

  void WriteLayerGroup(size_t g) {
    const LayerGroup& group = layers_.groups[g];
    const std::string shown = absl::StrCat(group.prefix, group.shown_index);
    std::vector<std::string> indices;
    for (int64_t i : group.folded_indices) indices.push_back(absl::StrCat(i));
    const std::string label = absl::StrCat(
        "<b>", group.folded_indices.size(), " more layer", group.folded_indices.size() > 1 ? "s" : "", " like ",
        Html(shown), "</b><br/>", Html(group.prefix), "{", Html(absl::StrJoin(indices, ", ")), "}<br/>", kSmall,
        group.nodes_per_layer, " nodes each: ", Html(OpCounts(group.ops_per_layer)), "</font>");
    absl::StrAppend(&out_, "  layers_", g, " [shape=box3d, style=filled, fillcolor=\"#e6dcf5\", label=<", label,
                    ">];\n");
  }

  // Where a drawn edge carrying `v` starts, or "" when it is not drawn.
  std::string SourceOf(const Value& v) {
    if (v.is_graph_input()) {
      for (size_t i = 0; i < graph_.inputs().size(); ++i)
        if (graph_.inputs()[i] == &v) return absl::StrCat("input_", i);
    }
    if (const Node* p = v.producer()) {
      if (hidden_.contains(p)) return "";
      return DisplayId(*p);
    }
    if (v.is_constant() && options_.show_all) return ConstantId(v);
    return "";
  }

  std::string DisplayId(const Node& node) const {
    if (auto it = layers_.group_of.find(&node); it != layers_.group_of.end()) return absl::StrCat("layers_", it->second);
    return ids_.at(&node);
  }

  std::string ConstantId(const Value& v) {
    auto [it, inserted] = constants_.try_emplace(&v, absl::StrCat("const_", constants_.size()));
    if (inserted) {
      const std::string values = SmallValues(v.constant());
      absl::StrAppend(&out_, "  ", it->second, " [shape=note, fillcolor=\"#fafafa\", fontsize=8, label=<",
                      Html(v.name()), "<br/>", Html(values.empty() ? TypeShape(v) : values), ">];\n");
    }
    return it->second;
  }

  void WriteInputEdges(const Node& node) {
    const std::string to = DisplayId(node);
    const bool folded = layers_.group_of.contains(&node);
    std::vector<const Node*> shape_cone;
    for (int i = 0; i < node.num_inputs(); ++i) {
      const Value* in = node.input(i);
      if (in == nullptr) continue;
      if (in->producer() != nullptr && hidden_.contains(in->producer())) {
        CollectCone(in->producer(), shape_cone);
        continue;
      }
      const std::string from = SourceOf(*in);
      if (from.empty() || from == to) continue;
      const bool shape_edge = IsShapeInput(node, i);
      Edge(from, to, TypeShape(*in), shape_edge ? "style=dashed" : "", in->name());
    }
    if (!shape_cone.empty() && !folded) WriteShapeSummary(node, shape_cone);
  }

  void CollectCone(const Node* start, std::vector<const Node*>& cone) const {
    std::vector<const Node*> stack = {start};
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      if (std::find(cone.begin(), cone.end(), n) != cone.end()) continue;
      cone.push_back(n);
      for (const Value* in : n->inputs())
        if (in != nullptr && in->producer() != nullptr && hidden_.contains(in->producer()))
          stack.push_back(in->producer());
    }
  }

  void WriteShapeSummary(const Node& consumer, const std::vector<const Node*>& cone) {
    std::map<std::string, int> ops;
    std::set<std::string> sources;
    for (const Node* n : cone) {
      ++ops[n->op_type()];
      for (const Value* in : n->inputs()) {
        if (in == nullptr || in->is_constant()) continue;
        if (in->producer() == nullptr || !hidden_.contains(in->producer())) sources.insert(in->name());
      }
    }
    const std::string id = absl::StrCat("shape_", shape_summaries_++);
    std::vector<std::string> source_list(sources.begin(), sources.end());
    if (source_list.size() > 3) {
      source_list.resize(3);
      source_list.push_back("...");
    }
    std::string label = absl::StrCat("shape computation (", cone.size(), " node", cone.size() > 1 ? "s" : "",
                                     ")<br/>", kSmall, Html(OpCounts(ops)), "</font>");
    if (!source_list.empty())
      absl::StrAppend(&label, "<br/>", kSmall, "from ", Html(absl::StrJoin(source_list, ", ")), "</font>");
    absl::StrAppend(&out_, "  ", id,
                    " [shape=box, style=\"dashed,rounded\", color=\"#999999\", fontsize=8, fontcolor=\"#555555\", "
                    "label=<",
                    label, ">];\n");
    Edge(id, ids_.at(&consumer), "", "style=dashed, color=\"#aaaaaa\"");
  }

  // One edge per (from, to, value): Q, K and V from one Split stay three edges,
  // while a value read by several nodes of a folded layer box is drawn once.
  void Edge(const std::string& from, const std::string& to, const std::string& label, const std::string& extra,
            const std::string& value = "") {
    if (!edges_.insert({from, to, value.empty() ? label : value}).second) return;
    std::vector<std::string> attrs;
    if (!label.empty()) attrs.push_back(absl::StrCat("label=", Quoted(" " + label)));
    if (!extra.empty()) attrs.push_back(extra);
    absl::StrAppend(&out_, "  ", from, " -> ", to, attrs.empty() ? "" : absl::StrCat(" [", absl::StrJoin(attrs, ", "), "]"),
                    ";\n");
  }

  const Graph& graph_;
  const FusionReport& report_;
  const DotOptions& options_;
  std::vector<Node*> nodes_;
  absl::flat_hash_set<const Node*> hidden_;
  LayerFolding layers_;
  std::map<std::string, const FusionRecord*> fusions_;
  std::map<std::string, std::vector<const RejectedCandidate*>> rejected_;
  absl::flat_hash_map<const Node*, std::string> ids_;
  absl::flat_hash_map<const Value*, std::string> constants_;
  std::set<std::tuple<std::string, std::string, std::string>> edges_;
  int shape_summaries_ = 0;
  std::string out_;
};

}  // namespace

std::string RenderDot(const Graph& graph, const FusionReport& report, const DotOptions& options) {
  return DotWriter(graph, report, options).Render();
}

}  // namespace attune::cli
