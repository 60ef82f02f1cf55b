#include "engine/exec/cache_sites.h"

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/schema/multi_head_attention.h"

namespace attune {
namespace {

// The ops whose kernel is the fused attention kernel (ops/attention/): it
// reads past_key/past_value through strides and can append present rows.
bool IsFusedAttention(const Node& node) {
  return (node.domain() == mha::kDomain && node.op_type() == mha::kOpType) ||
         (node.domain().empty() && node.op_type() == "Attention");
}

bool IsShapeOnly(const Node& node) {
  return node.domain().empty() && (node.op_type() == "Shape" || node.op_type() == "Size");
}

std::string NodeLabel(const Node& node) {
  return absl::StrCat("node ", QuoteName(node.name()), " (", EscapeControl(node.op_type()), ")");
}

CacheSite NotHere(std::string why) {
  CacheSite site;
  site.why_not = std::move(why);
  return site;
}

}  // namespace

CacheSite FindPastSite(const Value& past) {
  if (past.type() != ElementType::kFloat32)
    return NotHere(absl::StrCat("it is ", ElementTypeName(past.type()), ", not float32"));
  if (past.is_graph_output()) return NotHere("it is also a graph output");
  CacheSite site;
  for (const Use& use : past.uses()) {
    if (IsShapeOnly(*use.node)) continue;
    const bool past_port = use.index == mha::kInputPastKey || use.index == mha::kInputPastValue;
    if (!IsFusedAttention(*use.node) || !past_port)
      return NotHere(absl::StrCat("it is read by ", NodeLabel(*use.node), " as input ", use.index,
                                  ", not only by fused attention as its past"));
    if (site.node != nullptr)
      return NotHere(absl::StrCat("it is read by two attention nodes, ", NodeLabel(*site.node), " and ",
                                  NodeLabel(*use.node)));
    site.node = use.node;
    site.port = use.index;
  }
  if (site.node == nullptr) return NotHere("no fused attention node reads it");
  return site;
}

CacheSite FindPresentSite(const Value& present) {
  if (!present.uses().empty())
    return NotHere(absl::StrCat("it is also read by ", NodeLabel(*present.uses()[0].node)));
  const Value* v = &present;
  while (v->producer() != nullptr && v->producer()->domain().empty() && v->producer()->op_type() == "Identity") {
    const Value* source = v->producer()->input(0);
    if (source == nullptr) return NotHere("it is an Identity of nothing");
    if (source->is_graph_input() || source->is_constant() || source->is_graph_output() || source->uses().size() != 1)
      return NotHere(absl::StrCat("the value it is an Identity of, ", QuoteName(source->name()),
                                  ", is also read elsewhere or is not computed"));
    v = source;
  }
  const Node* producer = v->producer();
  if (producer == nullptr) return NotHere("no node computes it");
  const int port = v->producer_output();
  if (!IsFusedAttention(*producer) || (port != mha::kOutputPresentKey && port != mha::kOutputPresentValue))
    return NotHere(absl::StrCat("it is computed by ", NodeLabel(*producer), ", not by fused attention as its present"));
  CacheSite site;
  site.node = producer;
  site.port = port;
  return site;
}

}  // namespace attune
