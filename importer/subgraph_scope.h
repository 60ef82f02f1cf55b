// Internal to importer/: the names a subgraph (If's branches, Loop's and
// Scan's body) reads from its enclosing graphs, found on the proto before the
// subgraph is read, so that they become inputs of the node that owns it.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace attune::importer {

/// Deepest nesting of subgraphs read (a Loop body holding an If holding ...).
/// Real models nest two or three levels; the bound keeps a hostile file from
/// driving the reader's recursion.
inline constexpr int kMaxSubgraphDepth = 16;

/// A name a subgraph reads without defining it, and the first node that reads it.
struct OuterRead {
  std::string name;
  std::string reader;  // "node Add 'n' in subgraph 'body' of node Loop 'l'"
};

/// The names `graph` (nested `depth` levels deep) and the subgraphs in it read
/// but do not define (as an input, initializer or node output), in the order
/// first read. InvalidArgument when subgraphs nest deeper than
/// kMaxSubgraphDepth; Unimplemented for a list of graphs (GRAPHS).
/// `outermost` names the node of the model's graph that holds them all, for
/// the depth error.
absl::StatusOr<std::vector<OuterRead>> OuterReads(const onnx::GraphProto& graph, const std::string& where,
                                                  int depth, const std::string& outermost);

/// "node If 'name'" for a node of a proto graph (its name may be empty).
std::string DescribeProtoNode(const onnx::NodeProto& node);

}  // namespace attune::importer
