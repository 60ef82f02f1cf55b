#include "importer/attention_export.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <string_view>
#include <variant>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"
#include "importer/attention_sink_export.h"
#include "importer/gqa_export.h"
#include "importer/dynamic_int8_export.h"
#include "importer/fused_conv_export.h"
#include "importer/half_weight_export.h"
#include "importer/fused_matmul_export.h"
#include "importer/op_fusion_export.h"
#include "importer/onnx_exporter.h"

namespace attune {
namespace {

constexpr int kAttentionOpset = 23;

struct Replacement {
  std::string op_type;
  std::string domain;
  Attributes attributes;
};

bool IsAttentionFloat(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16 ||
         t == ElementType::kFloat64;
}

std::string DimText(const Dim& d) { return d.ToString(); }

// What ONNX Attention does differently from this op where the scores are not
// finite, for a node without a mask or key padding input (no row of it has
// every key hidden): "" when nothing, else the sentence the export note gives.
// ONNX Attention adds its causal mask, so a NaN or +inf score at a key a row
// does not see still makes that row NaN, and a row whose every visible score
// is -inf is NaN; this op may replace hidden scores (hidden_nonfinite) or give
// such a row the mean of V (masked_rows "uniform"). Finite scores agree.
std::string NonFiniteDifference(const Attributes& a) {
  std::vector<std::string> parts;
  const bool causal = a.GetInt(mha::kCausal, 0).value_or(0) != 0;
  const std::vector<int64_t> kept = a.GetInts(mha::kHiddenNonFinite, {1, 1}).value_or(std::vector<int64_t>{1, 1});
  if (causal && !kept.empty() && kept[0] == 0)
    parts.push_back("a NaN or infinite score at a key hidden from a row makes that row NaN (the fused op and "
                    "the replaced Where keep it out)");
  if (a.GetString(mha::kMaskedRows, "").value_or("") == mha::ToString(mha::MaskedRows::kUniform))
    parts.push_back("a row whose every visible score is -inf is NaN (the replaced subgraph gives the mean of V)");
  if (parts.empty()) return "";
  std::string text = "ONNX Attention adds its causal mask: ";
  for (size_t i = 0; i < parts.size(); ++i) absl::StrAppend(&text, i ? "; " : "", parts[i]);
  return absl::StrCat(text, ". Outputs agree wherever the scores are finite");
}

// ONNX Attention equivalent to `node`, or the reason there is none. The two
// ops run the same kernel; they differ only where checked here: ONNX has no
// window, aligns the causal diagonal top-left (offset = past length) where
// MultiHeadAttention aligns it bottom-right, and pads a mask whose key axis is
// short with -inf where MultiHeadAttention broadcasts a key axis of 1. Without
// a mask or key padding input no row has every key hidden, so masked_rows and
// hidden_nonfinite only speak of non-finite scores: such a node is written as
// ONNX Attention and `differs` says what happens there.
std::variant<Replacement, std::string> ToOnnxAttention(const Node& node, std::string* differs) {
  const Attributes& a = node.attributes();
  // The attributes ONNX Attention has an equivalent for (masked_rows, hidden_fills
  // and key_padding come with a key padding input or a policy it lacks).
  static constexpr std::string_view kTranslated[] = {mha::kNumHeads, mha::kKvNumHeads, mha::kScale,
                                                     mha::kCausal,   mha::kWindow,      mha::kSoftcap};
  const bool no_mask_input = node.input(mha::kInputMask) == nullptr && node.input(mha::kInputKeyPadding) == nullptr;
  const std::string rows = a.GetString(mha::kMaskedRows, "").value_or("");
  const bool rows_of_nonfinite_scores =
      no_mask_input && (rows == mha::ToString(mha::MaskedRows::kNaN) || rows == mha::ToString(mha::MaskedRows::kUniform));
  for (const auto& [name, value] : a.all()) {
    if (name == mha::kHiddenNonFinite) continue;  // below, after the window
    // A bound of the model's mask buffer: ONNX Attention computes longer inputs the model refused.
    if (name == mha::kMaxKvLen) continue;
    if (name == mha::kMaskedRows && rows_of_nonfinite_scores) continue;
    if (std::find(std::begin(kTranslated), std::end(kTranslated), name) == std::end(kTranslated))
      return absl::StrCat("attribute ", QuoteName(name), " has no ONNX Attention equivalent");
  }
  const int64_t window = a.GetInt(mha::kWindow, 0).value_or(0);
  if (window > 0) return absl::StrCat("a sliding window of ", window, " keys: ONNX Attention has no window");
  if (a.Has(mha::kHiddenNonFinite) && !no_mask_input)
    return "the mask replaces the scores of hidden keys (Where); ONNX Attention adds its masks, so a NaN or "
           "infinite key would also reach the rows that do not see it, and a row with every key hidden differs";
  const int64_t heads = a.GetInt(mha::kNumHeads, 0).value_or(0);
  const int64_t kv_heads = a.GetInt(mha::kKvNumHeads, heads).value_or(heads);
  const bool causal = a.GetInt(mha::kCausal, 0).value_or(0) != 0;
  // Up to the past value: ONNX Attention's input 6 is not a key padding mask.
  if (node.num_inputs() < 3 || node.num_inputs() > mha::kInputPastValue + 1 || node.num_outputs() > mha::kNumOutputs)
    return "unexpected number of inputs or outputs";
  const Value* q = node.input(mha::kInputQ);
  const Value* k = node.input(mha::kInputK);
  const Value* v = node.input(mha::kInputV);
  const Value* mask = node.input(mha::kInputMask);
  const Value* past_k = node.input(mha::kInputPastKey);
  const Value* past_v = node.input(mha::kInputPastValue);
  if (q == nullptr || k == nullptr || v == nullptr) return "Q, K or V is missing";
  if ((past_k == nullptr) != (past_v == nullptr)) return "only one of past key and past value is given";
  if (!IsAttentionFloat(q->type()))
    return absl::StrCat("Q is ", ElementTypeName(q->type()), ", not a float type ONNX Attention accepts");
  if (!q->shape() || !k->shape() || !v->shape()) return "the rank of Q, K or V is unknown";
  const size_t rank = q->shape()->size();
  if ((rank != 3 && rank != 4) || k->shape()->size() != rank || v->shape()->size() != rank)
    return "Q, K and V are not all 3-D or all 4-D";
  if (rank == 3 && heads <= 0) return "3-D Q/K/V without a num_heads attribute";
  for (const Value* past : {past_k, past_v})
    if (past != nullptr && (!past->shape() || past->shape()->size() != 4)) return "past key/value is not 4-D";

  const int seq_axis = rank == 4 ? 2 : 1;
  const Dim& q_len = (*q->shape())[seq_axis];
  const Dim& k_len = (*k->shape())[seq_axis];
  if (causal && !(q_len == k_len))
    return absl::StrCat("causal with ", DimText(k_len), " new keys for ", DimText(q_len),
                        " queries: ONNX Attention aligns the causal mask top-left, this op bottom-right; "
                        "they agree only when both counts are provably equal");
  if (mask != nullptr) {
    if (mask->type() != ElementType::kBool && mask->type() != q->type())
      return absl::StrCat("the mask is ", ElementTypeName(mask->type()), ", ONNX Attention needs bool or ",
                          ElementTypeName(q->type()));
    if (!mask->shape() || mask->shape()->empty()) return "the mask's shape is unknown";
    std::optional<Dim> total;
    if (past_k == nullptr) {
      total = k_len;
    } else if (const Value* present = node.output(mha::kOutputPresentKey); present != nullptr && present->shape() &&
                                                        present->shape()->size() == 4) {
      total = (*present->shape())[2];
    }
    const Dim& mask_keys = mask->shape()->back();
    if (!total || !(mask_keys == *total))
      return absl::StrCat("the mask's key axis (", DimText(mask_keys), ") is not provably the key count (",
                          total ? DimText(*total) : "?",
                          "): ONNX Attention pads a short mask with -inf where this op broadcasts it");
  }

  Replacement r{"Attention", "", {}};
  if (heads > 0) {
    r.attributes.Set("q_num_heads", heads);
    r.attributes.Set("kv_num_heads", kv_heads > 0 ? kv_heads : heads);
  }
  if (a.Has(mha::kScale)) r.attributes.Set("scale", a.GetFloat(mha::kScale).value_or(0.0f));
  if (causal) r.attributes.Set("is_causal", int64_t{1});
  const float softcap = a.GetFloat(mha::kSoftcap, 0.0f).value_or(0.0f);
  if (softcap > 0.0f) r.attributes.Set("softcap", softcap);
  // The probabilities (output 3): ONNX's qk_matmul_output after the softmax.
  if (node.output(mha::kOutputProbabilities) != nullptr) r.attributes.Set("qk_matmul_output_mode", int64_t{3});
  *differs = NonFiniteDifference(a);
  return r;
}

// A copy of `graph` with the nodes in `replace` given a new op type, domain and
// attributes; names, inputs and outputs stay.
std::unique_ptr<Graph> CopyGraph(const Graph& graph, const std::vector<Node*>& order,
                                 const absl::flat_hash_map<const Node*, Replacement>& replace) {
  auto copy = std::make_unique<Graph>();
  absl::flat_hash_map<const Value*, Value*> map;
  auto mapped = [&](const Value* v) -> Value* {
    if (v == nullptr) return nullptr;
    auto [it, inserted] = map.try_emplace(v, nullptr);
    if (inserted) {
      it->second = copy->AddValue(v->name(), v->type(), v->shape());
      if (v->constant() != nullptr) copy->SetConstant(it->second, *v->constant());
      if (v->constant_holder() != nullptr) copy->ReleaseConstant(it->second, v->constant_holder());
    }
    return it->second;
  };
  for (const Value* in : graph.inputs()) copy->AddInput(mapped(in));
  bool any_attune = false;
  for (const Node* n : order) {
    std::vector<Value*> ins, outs;
    for (const Value* v : n->inputs()) ins.push_back(mapped(v));
    for (const Value* v : n->outputs()) outs.push_back(mapped(v));
    if (auto it = replace.find(n); it != replace.end()) {
      copy->AddNode(it->second.op_type, it->second.domain, n->name(), ins, outs, it->second.attributes);
    } else {
      copy->AddNode(n->op_type(), n->domain(), n->name(), ins, outs, n->attributes());
      any_attune = any_attune || n->domain() == "attune";
    }
  }
  for (const Value* out : graph.outputs()) copy->AddOutput(mapped(out));
  for (const auto& [domain, version] : graph.opsets())
    if (domain != "attune" || any_attune) copy->SetOpset(domain, version);
  copy->producer_name = graph.producer_name;
  copy->producer_version = graph.producer_version;
  copy->graph_name = graph.graph_name;
  copy->ir_version = graph.ir_version;
  copy->metadata = graph.metadata;
  return copy;
}

}  // namespace

std::string OpsetRaiseProblem(const Node& node, int from, int to) {
  if (!node.domain().empty()) return "";
  const std::string& op = node.op_type();
  const Attributes& a = node.attributes();
  auto crosses = [&](int version) { return from < version && version <= to; };
  auto problem = [&](int version, const std::string& what) {
    return absl::StrCat(node.Describe(), ": ", op, "-", version, " ", what);
  };
  if ((op == "Softmax" || op == "LogSoftmax" || op == "Hardmax") && crosses(13))
    return problem(13, "normalises one axis where earlier versions flattened the trailing axes");
  if ((op == "Squeeze" || op == "Unsqueeze" || op == "ReduceSum") && crosses(13) && a.Has("axes"))
    return problem(13, "takes axes as an input, not an attribute");
  if (op == "Split" && crosses(13) && a.Has("split")) return problem(13, "takes split as an input, not an attribute");
  if (op == "Split" && crosses(18) && node.input(1) == nullptr && !a.Has("num_outputs"))
    return problem(18, "needs num_outputs when no split input is given");
  if (op.rfind("Reduce", 0) == 0 && op != "ReduceSum" && crosses(18) && a.Has("axes"))
    return problem(18, "takes axes as an input, not an attribute");
  if (op == "Pad" && crosses(11) && a.Has("pads")) return problem(11, "takes pads as an input");
  if (op == "Slice" && crosses(10) && a.Has("starts")) return problem(10, "takes starts/ends as inputs");
  if (op == "TopK" && crosses(10) && a.Has("k")) return problem(10, "takes k as an input");
  if (op == "Clip" && crosses(11) && (a.Has("min") || a.Has("max"))) return problem(11, "takes min/max as inputs");
  if (op == "Dropout" && crosses(12) && a.Has("ratio")) return problem(12, "takes ratio as an input");
  if (op == "Resize" && crosses(11)) return problem(11, "has new inputs and coordinate modes");
  if ((op == "Upsample" && crosses(10)) || (op == "Scatter" && crosses(11)))
    return absl::StrCat(node.Describe(), ": ", op, " is deprecated in later opsets");
  if (op == "RoiAlign" && crosses(16) && !a.Has("coordinate_transformation_mode"))
    return problem(16, "changed the default coordinate_transformation_mode");
  if (op == "GridSample" && crosses(20)) {
    const std::string mode = a.GetString("mode", "bilinear").value_or("");
    if (mode == "bilinear" && a.Has("mode")) return problem(20, "renamed mode 'bilinear' to 'linear'");
    if (mode == "bicubic") return problem(20, "renamed mode 'bicubic' to 'cubic'");
  }
  if (op == "DFT" && crosses(20)) return problem(20, "takes axis as an input");
  if (op == "GroupNormalization" && crosses(21)) return problem(21, "takes per-channel scale and bias");
  return "";
}

absl::StatusOr<std::unique_ptr<Graph>> RewriteAttentionForOnnx(const Graph& graph, AttentionExportSummary* summary) {
  AttentionExportSummary local;
  AttentionExportSummary& s = summary ? *summary : local;
  s = AttentionExportSummary();
  ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
  s.default_opset_before = graph.OpsetFor("");
  s.default_opset_after = s.default_opset_before;

  absl::flat_hash_map<const Node*, Replacement> replace;
  // Written as the subgraph after the copy, with why ONNX Attention does not stand for them.
  std::vector<std::pair<std::string, std::string>> as_subgraph;
  std::vector<std::string> as_gqa;
  for (const Node* n : order) {
    if (!mha::IsMultiHeadAttention(*n)) continue;
    if (IsLoweredGroupQueryAttention(*n)) {  // the vendor op it came from, after the copy
      as_gqa.push_back(n->name());
      s.notes.push_back({n->name(), false, "", "", false, true});
      continue;
    }
    if (n->input(mha::kInputSinks) != nullptr) {  // ONNX Attention has no sink
      as_subgraph.emplace_back(n->name(), "");
      continue;
    }
    std::string differs;
    auto r = ToOnnxAttention(*n, &differs);
    if (auto* why = std::get_if<std::string>(&r)) {
      // The probabilities are read: the subgraph gives them where its semantics are the op's.
      if (n->output(mha::kOutputProbabilities) != nullptr) {
        as_subgraph.emplace_back(n->name(), *why);
        continue;
      }
      s.notes.push_back({n->name(), false, *why, ""});
      continue;
    }
    replace.emplace(n, std::get<Replacement>(std::move(r)));
    s.notes.push_back({n->name(), true, "", differs});
  }
  const int target = std::max(s.default_opset_before, kAttentionOpset);
  if (!replace.empty() && target != s.default_opset_before) {
    for (const Node* n : order) {
      if (replace.contains(n)) continue;
      s.opset_blocker = OpsetRaiseProblem(*n, s.default_opset_before, target);
      if (!s.opset_blocker.empty()) break;
    }
    if (!s.opset_blocker.empty()) {
      replace.clear();
      for (AttentionExportNote& note : s.notes) {
        if (!note.as_onnx_attention) continue;
        note.as_onnx_attention = false;
        note.reason = absl::StrCat("the model's opset ", s.default_opset_before, " cannot be raised to ", target,
                                   ": ", s.opset_blocker);
      }
    }
  }
  std::unique_ptr<Graph> copy = CopyGraph(graph, order, replace);
  if (!replace.empty()) {
    copy->SetOpset("", target);
    s.default_opset_after = target;
  }
  s.attention_ops = static_cast<int>(replace.size());
  WriteGroupQueryAttentionBack(*copy, as_gqa);
  s.group_query_attention_ops = static_cast<int>(as_gqa.size());
  for (const auto& [name, not_onnx] : as_subgraph) {
    std::string why = WriteAttentionAsSubgraph(*copy, copy->FindNode(name), copy->OpsetFor(""));
    if (why.empty()) ++s.attention_subgraphs;
    if (!why.empty() && !not_onnx.empty()) why = absl::StrCat(not_onnx, "; as the subgraph: ", why);
    s.notes.push_back({name, false, why, "", why.empty()});
  }
  bool any_attune = false;
  for (const Node* n : copy->nodes()) any_attune |= n->domain() == mha::kDomain;
  if (!any_attune) copy->RemoveOpset(mha::kDomain);
  return copy;
}

absl::Status ExportOptimizedModelToFile(const Graph& graph, const std::string& path, AttentionExportSummary* summary) {
  ASSIGN_OR_RETURN(std::unique_ptr<Graph> rewritten, RewriteAttentionForOnnx(graph, summary));
  RETURN_IF_ERROR(LowerFusedMatMulForOnnx(*rewritten));
  RETURN_IF_ERROR(LowerFusedConvForOnnx(*rewritten));
  RETURN_IF_ERROR(LowerDynamicInt8ProductsForOnnx(*rewritten));
  RETURN_IF_ERROR(LowerHalfWeightProductsForOnnx(*rewritten));
  // After the attention rewrite, which may have raised the opset to one that has them.
  RETURN_IF_ERROR(LowerFusedOpsForOnnx(*rewritten));
  return ExportModelToFile(*rewritten, path);
}

}  // namespace attune
