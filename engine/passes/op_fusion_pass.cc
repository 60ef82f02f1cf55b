// The op fusions: activations and norms that exporters write out op by op,
// each proven by an op fusion rule (engine/passes/op_fusion/) and replaced by
// the op it computes. One pass class, instantiated per rule set with
// its rules: "elementwise_fusion" (GELU in its erf and tanh forms -> Gelu;
// x·sigmoid(alpha·x) -> Swish), "rms_norm_fusion" (-> RMSNormalization),
// "skip_norm_fusion" (a residual Add into the norm that reads it) and
// "product_epilogue_fusion" (an activation, and SwiGLU's Mul, into the
// product they read) and "conv_epilogue_fusion" (a residual Add and an
// activation into the Conv they read).
//
// A candidate starts at a rule's anchor (Tanh, Erf, Sigmoid, ReduceMean);
// the subgraph's output is searched among the nodes that read the anchor's
// output, up to the rule's depth, the farthest first. An anchor whose
// readers look like the rule's subgraph (the rule's near pattern) but that
// fuses nowhere is a rejection in the report, with the reason of the attempt
// that got furthest.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/log.h"
#include "core/common/status_macros.h"
#include "engine/passes/op_fusion/conv_epilogue_rule.h"
#include "engine/passes/op_fusion/dynamic_int8_rule.h"
#include "engine/passes/op_fusion/gelu_rule.h"
#include "engine/passes/op_fusion/op_rule.h"
#include "engine/passes/op_fusion/product_epilogue_rule.h"
#include "engine/passes/op_fusion/rms_norm_rule.h"
#include "engine/passes/op_fusion/skip_norm_rule.h"
#include "engine/passes/op_fusion/swish_rule.h"
#include "engine/passes/passes.h"
#include "engine/pattern/predicates.h"
#include "engine/rewrite/rewrite_plan.h"
#include "engine/rewrite/verify_rewrite.h"

namespace attune {
namespace {

using op_fusion::OpRewrite;
using op_fusion::OpRule;

// Bounds the forward search from one anchor (a value read by many nodes).
constexpr size_t kMaxRootCandidates = 32;

// The values a rule's subgraph may end at: outputs of the nodes that read the
// anchor's output, transitively, up to `depth` readers away, farthest first;
// then, when `min_depth` is 0, the anchor's own output.
std::vector<const Value*> RootCandidates(const Node& anchor, int min_depth, int depth) {
  std::vector<std::vector<const Value*>> levels;
  absl::flat_hash_set<const Node*> seen = {&anchor};
  std::vector<const Node*> frontier = {&anchor};
  size_t count = 0;
  for (int d = 0; d < depth && !frontier.empty() && count < kMaxRootCandidates; ++d) {
    std::vector<const Node*> next;
    std::vector<const Value*> level;
    for (const Node* n : frontier)
      for (const Value* out : n->outputs()) {
        if (out == nullptr) continue;
        for (const Use& use : out->uses()) {
          if (!seen.insert(use.node).second || use.node->output(0) == nullptr) continue;
          next.push_back(use.node);
          level.push_back(use.node->output(0));
          if (++count >= kMaxRootCandidates) break;
        }
      }
    levels.push_back(std::move(level));
    frontier = std::move(next);
  }
  std::vector<const Value*> roots;
  for (auto it = levels.rbegin(); it != levels.rend(); ++it) roots.insert(roots.end(), it->begin(), it->end());
  if (min_depth == 0 && anchor.output(0) != nullptr) roots.push_back(anchor.output(0));
  return roots;
}

// Whether a reader of the anchor (or the anchor, at depth 0) looks like the
// rule's subgraph.
bool IsCandidate(const OpRule& rule, const Node& anchor) {
  if (rule.min_depth == 0 && anchor.output(0) != nullptr && pattern::MatchValue(rule.near, anchor.output(0)).matched)
    return true;
  for (const Value* out : anchor.outputs()) {
    if (out == nullptr) continue;
    for (const Use& use : out->uses())
      if (use.node->output(0) != nullptr && pattern::MatchValue(rule.near, use.node->output(0)).matched) return true;
  }
  return false;
}

class OpFusionPass final : public Pass {
 public:
  OpFusionPass(std::string name, std::vector<OpRule> rules) : name_(std::move(name)), rules_(std::move(rules)) {}

  std::string_view name() const override { return name_; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    std::vector<std::string> anchors;
    for (const Node* n : order) anchors.push_back(n->name());
    bool changed = false;
    for (const std::string& name : anchors) {
      for (const OpRule& rule : rules_) {
        if (context.max_rewrites >= 0 && rewrites_ >= context.max_rewrites) return changed;
        const Node* anchor = graph.FindNode(name);  // gone with an earlier fusion
        if (anchor == nullptr || !anchor->domain().empty()) break;
        if (std::find(rule.anchor_ops.begin(), rule.anchor_ops.end(), anchor->op_type()) == rule.anchor_ops.end())
          continue;
        if (verify_undone_.count({rule.name, name}) || !IsCandidate(rule, *anchor)) continue;
        ASSIGN_OR_RETURN(bool fused, TryAnchor(graph, context, rule, *anchor));
        changed |= fused;
      }
    }
    return changed;
  }

 private:
  absl::StatusOr<bool> TryAnchor(Graph& graph, PassContext& context, const OpRule& rule, const Node& anchor) {
    const std::string anchor_name = anchor.name();
    std::optional<OpRewrite> rewrite;
    std::string best_reason = "no match";
    size_t best_progress = 0;
    bool have_reason = false;
    for (const Value* root : RootCandidates(anchor, rule.min_depth, rule.max_depth)) {
      auto accept = [&](const pattern::Match& m) -> std::optional<std::string> {
        if (m.node(op_fusion::kAnchor) != &anchor) return "the match goes through another anchor";
        if (auto why = rule.check(graph, m)) return why;
        std::vector<const Node*> kept;
        for (const std::string& name : rule.kept_nodes) kept.push_back(m.node(name));
        if (auto why = pattern::CheckInternalUses(m, root->producer(), kept)) return why;
        rewrite = rule.rewrite(graph, m, *root);
        return std::nullopt;
      };
      const pattern::MatchResult r = pattern::MatchValue(rule.pattern, root, accept);
      if (r.matched) break;
      if (!have_reason || r.failure_progress > best_progress) {
        have_reason = true;
        best_progress = r.failure_progress;
        best_reason = r.failure;
      }
    }
    if (!rewrite) {
      Reject({anchor_name, rule.name, best_reason}, context);
      return false;
    }

    OpFusionRecord record = std::move(rewrite->record);
    record.pattern = rule.name;
    if (context.verify_fusion && context.evaluator != nullptr) {
      PassContext probe = context;
      probe.exec_options.max_tensor_bytes =
          std::min(context.exec_options.max_tensor_bytes, kFusionProbeMaxTensorBytes);
      auto errors = VerifyRewritePlan(graph, rewrite->plan, *context.evaluator, probe.exec_options);
      if (!errors.ok()) {
        Reject({anchor_name, rule.name, absl::StrCat("verify could not run: ", errors.status().message())}, context);
      } else {
        record.verify_max_abs_error = errors->max_abs;
        record.verify_max_rel_error = errors->max_rel;
        const std::string why = VerifyVerdict(*errors, rewrite->type);
        if (!why.empty()) {
          record.undone = true;
          verify_undone_.insert({rule.name, anchor_name});
          if (context.report != nullptr) context.report->op_fusions.push_back(record);
          Reject({anchor_name, rule.name, why}, context);
          return false;
        }
      }
    }
    ASSIGN_OR_RETURN(AppliedPlan applied, ApplyRewritePlan(graph, rewrite->plan));
    record.node = applied.node_names.back();
    record.replaced = applied.removed;
    const Logger& log = context.exec_options.logger;
    if (log.Enabled(LogLevel::kDebug))
      log.Log(LogLevel::kDebug, absl::StrCat(name_, ": ", rule.name, " at '", anchor_name, "' -> ", record.op, " '",
                                             record.node, "' (", record.attributes, ") replacing ",
                                             absl::StrJoin(record.replaced, ", ")));
    if (context.report != nullptr) {
      // Reasons from rounds before what this needed was known are void now.
      auto& rejected = context.report->rejected;
      rejected.erase(std::remove_if(rejected.begin(), rejected.end(),
                                    [&](const RejectedCandidate& r) {
                                      return r.at == anchor_name && r.pattern == rule.name;
                                    }),
                     rejected.end());
      context.report->op_fusions.push_back(std::move(record));
    }
    ++rewrites_;
    return true;
  }

  void Reject(RejectedCandidate rejection, const PassContext& context) {
    const Logger& log = context.exec_options.logger;
    if (log.Enabled(LogLevel::kDebug))
      log.Log(LogLevel::kDebug, absl::StrCat(name_, ": ", rejection.pattern, " not fused at '", rejection.at,
                                             "': ", rejection.reason));
    AddRejection(context.report, std::move(rejection));
  }

  std::string name_;
  std::vector<OpRule> rules_;
  // Across fixed-point rounds: the rewrite budget used so far and the
  // candidates verify mode has turned down (rule, anchor).
  int rewrites_ = 0;
  std::set<std::pair<std::string, std::string>> verify_undone_;
};

}  // namespace

std::unique_ptr<Pass> MakeElementwiseFusionPass() {
  std::vector<OpRule> rules = op_fusion::GeluRules();
  rules.push_back(op_fusion::SwishRule());
  return std::make_unique<OpFusionPass>("elementwise_fusion", std::move(rules));
}

std::unique_ptr<Pass> MakeRmsNormFusionPass() {
  return std::make_unique<OpFusionPass>("rms_norm_fusion", std::vector<OpRule>{op_fusion::RmsNormRule()});
}

std::unique_ptr<Pass> MakeSkipNormFusionPass() {
  return std::make_unique<OpFusionPass>("skip_norm_fusion", op_fusion::SkipNormRules());
}

std::unique_ptr<Pass> MakeProductEpilogueFusionPass() {
  std::vector<OpRule> rules;
  rules.push_back(op_fusion::SwiGluRule());
  rules.push_back(op_fusion::ProductActivationRule());
  rules.push_back(op_fusion::ProductBiasRule());
  rules.push_back(op_fusion::DynamicInt8ProductRule());
  return std::make_unique<OpFusionPass>("product_epilogue_fusion", std::move(rules));
}

std::unique_ptr<Pass> MakeConvEpilogueFusionPass() {
  // The residual first: an Add's anchor comes before the Relu that reads it.
  return std::make_unique<OpFusionPass>(
      "conv_epilogue_fusion", std::vector<OpRule>{op_fusion::ConvResidualRule(), op_fusion::ConvActivationRule()});
}

}  // namespace attune
