#include "importer/subgraph_scope.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "importer/proto_attribute.h"

namespace attune::importer {

std::string DescribeProtoNode(const onnx::NodeProto& node) {
  return absl::StrCat("node ", EscapeControl(node.op_type()), " ", QuoteName(node.name()));
}

absl::StatusOr<std::vector<OuterRead>> OuterReads(const onnx::GraphProto& graph, const std::string& where,
                                                  int depth, const std::string& outermost) {
  if (depth > kMaxSubgraphDepth)
    return absl::InvalidArgumentError(absl::StrCat(outermost, " nests subgraphs deeper than ", kMaxSubgraphDepth,
                                                   " levels, which Attune refuses"));
  absl::flat_hash_set<std::string> defined;
  for (const auto& in : graph.input()) defined.insert(in.name());
  for (const auto& init : graph.initializer()) defined.insert(init.name());
  for (const auto& node : graph.node())
    for (const std::string& out : node.output()) defined.insert(out);
  std::vector<OuterRead> reads;
  absl::flat_hash_set<std::string> seen;
  auto read = [&](const std::string& name, const std::string& by) {
    if (name.empty() || defined.contains(name) || !seen.insert(name).second) return;
    reads.push_back({name, by});
  };
  for (const auto& node : graph.node()) {
    const std::string reader = absl::StrCat(DescribeProtoNode(node), " in ", where);
    for (const std::string& in : node.input()) read(in, reader);
    for (const auto& a : node.attribute()) {
      const auto type = AttributeTypeOf(a);
      if (type == onnx::AttributeProto::GRAPHS)
        return absl::UnimplementedError(absl::StrCat(reader, ": attribute ", QuoteName(a.name()),
                                                     " is a list of graphs, which Attune does not support"));
      if (type != onnx::AttributeProto::GRAPH) continue;
      const std::string inner = absl::StrCat("subgraph ", QuoteName(a.name()), " of ", reader);
      ASSIGN_OR_RETURN(std::vector<OuterRead> nested, OuterReads(a.g(), inner, depth + 1, outermost));
      for (OuterRead& r : nested) read(r.name, r.reader);
    }
  }
  for (const auto& out : graph.output()) read(out.name(), absl::StrCat("output ", QuoteName(out.name()), " of ", where));
  return reads;
}

}  // namespace attune::importer
