// The attention fusion pass: finds MatMul(Softmax(...), V) candidates, tries
// every attention variant's pattern and check on each, and replaces the ones
// that pass with one attune.MultiHeadAttention node. Every candidate that is
// not fused is reported with the first check that failed.
#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "engine/passes/attention/attention_patterns.h"
#include "engine/passes/attention/attention_rule.h"
#include "engine/passes/attention/mask_chain_proof.h"
#include "engine/passes/passes.h"
#include "engine/pattern/pattern.h"
#include "engine/rewrite/rewrite_plan.h"
#include "engine/rewrite/verify_rewrite.h"

namespace attune {
namespace {

using attention::AttentionRewrite;

// The report's pattern name for a Softmax that no attention candidate anchors.
constexpr char kUnanchoredPattern[] = "attention";
using attention::AttentionVariant;

struct Candidate {
  std::string root;     // the MatMul(probabilities, V) node
  std::string softmax;  // where the report anchors the candidate
};

class AttentionFusionPass final : public Pass {
 public:
  AttentionFusionPass() {
    for (const AttentionVariant& v : attention::AllAttentionVariants()) {
      variants_.push_back(v);
      patterns_.push_back(attention::AttentionPattern(v));
    }
  }

  std::string_view name() const override { return "attention_fusion"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    ASSIGN_OR_RETURN(std::vector<Candidate> candidates, FindCandidates(graph));
    ReportUnreadLayouts(graph, candidates, context.report);
    bool changed = false;
    for (const Candidate& candidate : candidates) {
      if (context.max_rewrites >= 0 && rewrites_ >= context.max_rewrites) break;
      if (verify_undone_.count(candidate.softmax)) continue;
      Node* root = graph.FindNode(candidate.root);
      if (root == nullptr || root->output(0) == nullptr) continue;  // gone with an earlier fusion
      ASSIGN_OR_RETURN(bool fused, TryCandidate(graph, context, *root, candidate));
      changed |= fused;
    }
    return changed;
  }

 private:
  // Every Softmax that no candidate anchors is reported with why it is not
  // attention the patterns read, so that no miss is silent: probabilities
  // that reach a MatMul only through views the patterns do not read (for
  // example GPTBigCode's heads folded into the query axis), probabilities the
  // model also returns or reads elsewhere (attention weights), or a Softmax
  // whose probabilities are not multiplied by values at all.
  static void ReportUnreadLayouts(const Graph& graph, const std::vector<Candidate>& candidates, FusionReport* report) {
    if (report == nullptr) return;
    std::set<std::string> anchored;
    for (const Candidate& c : candidates) anchored.insert(c.softmax);
    for (const Node* n : graph.nodes()) {
      if (n->op_type() != "Softmax" || !n->domain().empty() || n->output(0) == nullptr) continue;
      if (anchored.count(n->name()) > 0) continue;
      // One line per Softmax: the reason of this round replaces an earlier round's.
      auto& rejected = report->rejected;
      rejected.erase(std::remove_if(rejected.begin(), rejected.end(),
                                    [&](const RejectedCandidate& r) {
                                      return r.at == n->name() && r.pattern == kUnanchoredPattern;
                                    }),
                     rejected.end());
      AddRejection(report, {n->name(), kUnanchoredPattern, UnanchoredSoftmaxReason(*n)});
    }
  }

  // Why the probabilities of `softmax` are not a candidate: the first thing
  // on their single-use view path to a MatMul that stops the walk.
  static std::string UnanchoredSoftmaxReason(const Node& softmax) {
    static const std::set<std::string> kViews = {"Reshape", "Transpose", "Cast",    "Squeeze",
                                                 "Unsqueeze", "Identity", "Dropout", "Flatten"};
    const Value* v = softmax.output(0);
    std::vector<std::string> path;
    auto through = [&] {
      return path.empty() ? std::string() : absl::StrCat(" (through ", absl::StrJoin(path, ", "), ")");
    };
    for (int depth = 0; depth < 6; ++depth) {
      if (v->is_graph_output())
        return absl::StrCat("the probabilities", through(), " are the graph output '", v->name(),
                            "': the fused op does not return them");
      if (v->uses().empty()) return absl::StrCat("the probabilities", through(), " are not read");
      if (v->uses().size() > 1) {
        std::vector<std::string> users;
        for (const Use& use : v->uses()) users.push_back(absl::StrCat(use.node->op_type(), " '", use.node->name(), "'"));
        return absl::StrCat("the probabilities", through(), " are read by ", v->uses().size(), " nodes (",
                            absl::StrJoin(users, ", "),
                            "): the fused op gives only the attention output, not the weights");
      }
      const Node* user = v->uses()[0].node;
      const std::string at = absl::StrCat(user->op_type(), " '", user->name(), "'");
      if (user->op_type() == "MatMul" && user->domain().empty()) {
        if (v->uses()[0].index != 0)
          return absl::StrCat("the probabilities", through(), " are the second operand of ", at,
                              ", not the weights of P·V");
        return absl::StrCat("the probabilities reach ", at, through().empty() ? " directly" : through(),
                            ", a layout of the scores or of P·V the attention patterns do not read");
      }
      if (!user->domain().empty() || kViews.count(user->op_type()) == 0 || user->num_outputs() < 1 ||
          user->output(0) == nullptr)
        return absl::StrCat("not attention: the probabilities", through(), " go to ", at,
                            ", not to a MatMul with values");
      path.push_back(at);
      v = user->output(0);
    }
    return absl::StrCat("the probabilities", through(), " reach no MatMul within 6 view steps");
  }

  static absl::StatusOr<std::vector<Candidate>> FindCandidates(const Graph& graph) {
    static const pattern::Pattern kCandidate = attention::AttentionCandidatePattern();
    ASSIGN_OR_RETURN(std::vector<Node*> order, graph.TopologicalOrder());
    std::vector<Candidate> out;
    for (const Node* n : order) {
      if (n->op_type() != "MatMul" || !n->domain().empty() || n->output(0) == nullptr) continue;
      pattern::MatchResult r = pattern::MatchValue(kCandidate, n->output(0));
      if (r.matched) out.push_back({n->name(), r.match.node(attention::captures::kSoftmax)->name()});
    }
    return out;
  }

  absl::StatusOr<bool> TryCandidate(Graph& graph, PassContext& context, const Node& root, const Candidate& candidate) {
    // The mask proof and the verification evaluate subgraphs on inputs sized
    // by the model's declared dims; within the probe budget a declared batch
    // of 2^31 is refused at once instead of allocated.
    PassContext probe = context;
    probe.exec_options.max_tensor_bytes = std::min(context.exec_options.max_tensor_bytes, kFusionProbeMaxTensorBytes);
    std::optional<AttentionRewrite> rewrite;
    size_t chosen = 0;
    std::string best_reason = "no attention pattern matches";
    std::string best_pattern = "attention";
    size_t best_progress = 0;
    for (size_t i = 0; i < patterns_.size() && !rewrite; ++i) {
      auto accept = [&](const pattern::Match& m) -> std::optional<std::string> {
        auto result = attention::CheckAttention(graph, m, variants_[i], probe, &memo_);
        if (auto* why = std::get_if<std::string>(&result)) return *why;
        rewrite = std::get<AttentionRewrite>(std::move(result));
        return std::nullopt;
      };
      pattern::MatchResult r = pattern::MatchValue(patterns_[i], root.output(0), accept);
      if (r.matched) {
        chosen = i;
        break;
      }
      if (r.failure_progress > best_progress) {
        best_progress = r.failure_progress;
        best_reason = r.failure;
        best_pattern = variants_[i].Name();
      }
    }
    if (!rewrite) {
      AddRejection(context.report, {candidate.softmax, best_pattern, best_reason});
      return false;
    }
    const std::string pattern_name = variants_[chosen].Name();
    // Reasons from rounds before the shapes it needed were known are void now.
    if (context.report != nullptr) {
      auto& rejected = context.report->rejected;
      rejected.erase(std::remove_if(rejected.begin(), rejected.end(),
                                    [&](const RejectedCandidate& r) { return r.at == candidate.softmax; }),
                     rejected.end());
    }
    if (rewrite->not_causal_reason)
      AddRejection(context.report, {candidate.softmax, pattern_name,
                                    absl::StrCat("not fused as causal: ", *rewrite->not_causal_reason)});

    FusionRecord record = rewrite->record;
    if (context.verify_fusion && context.evaluator != nullptr) {
      auto errors = VerifyRewritePlan(graph, rewrite->plan, *context.evaluator, probe.exec_options,
                                                rewrite->verify_lengths, rewrite->verify_padding_inputs);
      if (errors.ok()) {
        record.verify_max_abs_error = errors->max_abs;
        record.verify_max_rel_error = errors->max_rel;
        const std::string why = VerifyVerdict(*errors, rewrite->output_type);
        if (!why.empty()) {
          record.undone = true;
          verify_undone_.insert(candidate.softmax);
          if (context.report != nullptr) context.report->fusions.push_back(record);
          AddRejection(context.report, {candidate.softmax, pattern_name, why});
          return false;
        }
      } else {
        AddRejection(context.report, {candidate.softmax, pattern_name,
                                      absl::StrCat("verify could not run: ", errors.status().message())});
      }
    }
    ASSIGN_OR_RETURN(AppliedPlan applied, ApplyRewritePlan(graph, rewrite->plan));
    record.node = applied.node_names.back();
    record.replaced = applied.removed;
    if (context.report != nullptr) context.report->fusions.push_back(std::move(record));
    ++rewrites_;
    return true;
  }

  std::vector<AttentionVariant> variants_;
  std::vector<pattern::Pattern> patterns_;
  // Pass-level bookkeeping across fixed-point iterations: the rewrite budget
  // used so far and the candidates verify mode has turned down.
  int rewrites_ = 0;
  std::set<std::string> verify_undone_;
  attention::MaskChainMemo memo_;
};

}  // namespace

std::unique_ptr<Pass> MakeAttentionFusionPass() { return std::make_unique<AttentionFusionPass>(); }

}  // namespace attune
