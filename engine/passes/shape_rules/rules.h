// Internal to the shape rules: the rule table each op family fills, and the
// helpers the rules share (axes, broadcasting, symbolic tensor contents).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "engine/passes/shape_rules/shape_context.h"

namespace attune::shape_rules {

class RuleTable {
 public:
  void Add(std::string_view op_type, ShapeRule rule, std::string_view domain = "");
  ShapeRule Find(std::string_view domain, std::string_view op_type) const;

 private:
  absl::flat_hash_map<std::string, ShapeRule> rules_;
};

// One function per op family, each in its own file.
void AddElementwiseRules(RuleTable& table);
void AddMatMulRules(RuleTable& table);
void AddLayoutRules(RuleTable& table);
void AddSlicingRules(RuleTable& table);
void AddReductionRules(RuleTable& table);
void AddGeneratorRules(RuleTable& table);
void AddAttentionRules(RuleTable& table);
void AddScatterRules(RuleTable& table);
void AddConvRules(RuleTable& table);
void AddQuantizeRules(RuleTable& table);
void AddQuantizedRules(RuleTable& table);
void AddCnnRules(RuleTable& table);
void AddLossRules(RuleTable& table);
void AddSelectionRules(RuleTable& table);
void AddSignalRules(RuleTable& table);
void AddRecurrentRules(RuleTable& table);
void AddControlFlowRules(RuleTable& table);
void AddTrainingRules(RuleTable& table);

/// An axis in [-rank, rank) made non-negative; InvalidArgument otherwise.
absl::StatusOr<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const ShapeContext& ctx);

/// Numpy broadcasting of symbolic shapes. A pair of dims that may or may not
/// broadcast (two different symbols) gives an unknown dim; two different
/// numbers, neither 1, are an error.
absl::StatusOr<SymbolicShape> BroadcastShapes(const std::vector<SymbolicShape>& shapes, const ShapeContext& ctx);

/// Output 0 gets input `from`'s type and shape (elementwise unary ops).
void CopyFacts(ShapeContext& ctx, int from, int to = 0);

/// Tracked data is allowed for small integral or bool tensors of static shape.
bool MayTrackData(ElementType type, const std::optional<SymbolicShape>& shape);

/// Elementwise evaluation of tracked data with broadcasting: `fn` maps one
/// element of each input to the output element (nullopt: not provable). Needs
/// every input's data and a static, small output shape. An element `fn`
/// cannot prove is an unknown Dim.
std::optional<std::vector<Dim>> BroadcastData(const SymbolicShape& out_shape, const std::vector<const ValueFacts*>& inputs,
                                              const std::function<Dim(const std::vector<Dim>&)>& fn);

/// Most dims a rule derives from a shape tensor's declared length (Expand's
/// and ConstantOfShape's shape input): a model may declare that length as
/// 2^40, and a vector of that many dims would exhaust memory during analysis
/// (found by fuzz/model_import_fuzz.cc). Longer means "rank unknown"; the
/// kernel checks the real shape at run time against the tensor limit.
inline constexpr int64_t kMaxDerivedRank = 64;

/// `length` unknown dims, or nullopt when `length` is negative or above kMaxDerivedRank.
std::optional<SymbolicShape> UnknownDims(int64_t length);

/// Element count of a static shape, or -1.
int64_t StaticElementCount(const std::optional<SymbolicShape>& shape);

}  // namespace attune::shape_rules
