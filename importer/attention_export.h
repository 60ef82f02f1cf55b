// Export of an optimised graph with its fused attention written as the
// standard ONNX Attention op (opset 23) wherever that op means the same thing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/ir/graph.h"

namespace attune {

/// What happened to one attune.MultiHeadAttention node.
struct AttentionExportNote {
  std::string node;
  bool as_onnx_attention = false;
  std::string reason;  // why it stayed attune.MultiHeadAttention
  /// Written as ONNX Attention: what that op does differently where the
  /// scores are not finite ("" when nothing); finite scores agree.
  std::string nonfinite_difference;
  /// Written back as the standard subgraph it replaced (attention sinks, which ONNX Attention lacks).
  bool as_subgraph = false;
  /// Written back as the com.microsoft.GroupQueryAttention it was lowered from (gqa_export.h).
  bool as_vendor_op = false;
};

struct AttentionExportSummary {
  int default_opset_before = 0;
  int default_opset_after = 0;
  int attention_ops = 0;  // nodes written as ONNX Attention
  int attention_subgraphs = 0;  // nodes written as their standard subgraph (attention sinks)
  int group_query_attention_ops = 0;  // nodes written back as com.microsoft.GroupQueryAttention
  std::vector<AttentionExportNote> notes;
  /// Set when an op of the graph changed meaning between the model's opset and
  /// 23, so the opset could not be raised and every node stayed attune.
  std::string opset_blocker;
};

/// Why `op` (default domain) would change meaning or become invalid if the
/// model's opset `from` were raised to `to`; "" when it would not.
std::string OpsetRaiseProblem(const Node& node, int from, int to);

/// A copy of `graph` in which every attune.MultiHeadAttention lowered from a
/// com.microsoft.GroupQueryAttention is that op again, and every other one
/// that ONNX Attention expresses exactly is an `Attention` node (same name,
/// inputs, outputs), the default opset raised to at least 23 when any was written.
absl::StatusOr<std::unique_ptr<Graph>> RewriteAttentionForOnnx(const Graph& graph, AttentionExportSummary* summary);

/// RewriteAttentionForOnnx, then FusedMatMul, the dynamic-int8 and half-
/// weight products and the op fusions' ops the opset lacks as standard ops
/// (fused_matmul_export.h, dynamic_int8_export.h, half_weight_export.h,
/// op_fusion_export.h), then ExportModelToFile.
absl::Status ExportOptimizedModelToFile(const Graph& graph, const std::string& path,
                                        AttentionExportSummary* summary = nullptr);

}  // namespace attune
