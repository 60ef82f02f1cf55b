#include "engine/passes/pass_manager.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "core/common/log.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"
#include "core/validate/validate_graph.h"
#include "engine/passes/contrib_lowering.h"
#include "engine/passes/passes.h"

namespace attune {
namespace {

// The fuse stage goes round once per layer of a decoder whose layers read
// the shapes the previous layer's fusion gives them (a KV-cache export loses
// the query length in every unfused layer), so it may take as many rounds as
// a deep model has layers.
constexpr int kMaxFuseIterations = 256;
// Each round lowers every vendor op whose inputs' ranks are known; a chain of
// vendor ops each waiting on the one before needs a round per link.
constexpr int kMaxVendorRounds = 64;

}  // namespace

void PassManager::AddStage(std::string stage_name, std::vector<std::unique_ptr<Pass>> passes, int max_iterations) {
  stages_.push_back(Stage{std::move(stage_name), std::move(passes), max_iterations});
}

bool PassManager::Has(const std::string& pass_name) const {
  for (const Stage& stage : stages_)
    for (const auto& pass : stage.passes)
      if (pass->name() == pass_name) return true;
  return false;
}

absl::Status PassManager::NoSuchPass(const std::string& pass_name) const {
  return absl::NotFoundError(
      absl::StrCat("no pass named ", QuoteName(pass_name), " in this pipeline (its passes: ",
                   absl::StrJoin(PassNames(), ", "), ")"));
}

absl::Status PassManager::Disable(const std::string& pass_name) {
  if (!Has(pass_name)) return NoSuchPass(pass_name);
  disabled_.insert(pass_name);
  return absl::OkStatus();
}

absl::Status PassManager::StopAfter(const std::string& pass_name) {
  if (!Has(pass_name)) return NoSuchPass(pass_name);
  stop_after_ = pass_name;
  return absl::OkStatus();
}

std::vector<std::string> PassManager::PassNames() const {
  std::vector<std::string> names;
  for (const Stage& stage : stages_)
    for (const auto& pass : stage.passes) {
      std::string n(pass->name());
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  return names;
}

absl::Status PassManager::Run(Graph& graph, PassContext& context) const {
  if (disabled_.contains(stop_after_))
    return absl::InvalidArgumentError(
        absl::StrCat("cannot stop after pass ", QuoteName(stop_after_), ": it is disabled"));
  for (const Stage& stage : stages_) {
    // Passes trust what the validator checked; each stage sees the ranks the
    // stage before it inferred, so it checks again.
    RETURN_IF_ERROR(ValidateGraph(graph));
    bool changed = true;
    for (int iteration = 0; iteration < stage.max_iterations && changed; ++iteration) {
      changed = false;
      for (const auto& pass : stage.passes) {
        const std::string name(pass->name());
        if (disabled_.contains(name)) continue;
        auto result = pass->Run(graph, context);
        if (!result.ok()) return Annotate(result.status(), absl::StrCat("pass ", name));
        if (context.report != nullptr) context.report->passes_run.push_back(name);
        absl::Status verified = graph.Verify();
        if (!verified.ok()) return Annotate(verified, absl::StrCat("graph invalid after pass ", name));
        changed |= *result;
        if (name == stop_after_) {
          if (context.report != nullptr) context.report->stopped_after = name;
          return absl::OkStatus();
        }
      }
    }
    // The last allowed round still changed the graph: the stage did not reach
    // its fixed point, and what follows sees a graph it may not expect.
    if (changed && stage.max_iterations > 0) {
      context.exec_options.logger.Log(
          LogLevel::kWarning, absl::StrCat("pass manager: stage ", stage.name, " still changed the graph in round ",
                                           stage.max_iterations, ", its cap; going on with the graph as it is"));
      if (context.report != nullptr) context.report->iteration_cap_hit.push_back({stage.name, stage.max_iterations});
    }
  }
  return absl::OkStatus();
}

std::map<std::string, int> OpHistogram(const Graph& graph) {
  std::map<std::string, int> histogram;
  for (const Node* n : graph.nodes()) ++histogram[n->op_type()];
  return histogram;
}

namespace {

// The canonicalisation that brings exporters' forms to the patterns.
std::vector<std::unique_ptr<Pass>> SimplifyPasses() {
  std::vector<std::unique_ptr<Pass>> simplify;
  simplify.push_back(MakeConstantFoldingPass());
  // Before shape inference, so the MatMuls it writes get their shapes in the
  // same round; it reads the ranks the previous round (or the model) gave.
  simplify.push_back(MakeEinsumToMatMulPass());
  simplify.push_back(MakeShapeInferencePass());
  simplify.push_back(MakeShapeFoldingPass());
  // After shape folding: its shape proofs read the folded ConstantOfShape shapes.
  simplify.push_back(MakeAlgebraicSimplifyPass());
  // GPT-J masks the raw scores and scales after: the patterns read the scale first.
  simplify.push_back(MakeScaleBeforeMaskPass());
  // After constant folding, which turns the pieces' Expand targets into constants.
  simplify.push_back(MakeJoinUnrolledRepeatPass());
  // After algebraic_simplify, which removes baddbmm's zero base from the 3-D
  // scores; it reads the symbolic shapes that shape inference gave.
  simplify.push_back(MakeUnmergeHeadsPass());
  simplify.push_back(MakeUnfoldQueryHeadsPass());
  simplify.push_back(MakeCommonSubexpressionPass());
  simplify.push_back(MakeDeadCodePass());
  return simplify;
}

}  // namespace

std::unique_ptr<PassManager> DefaultPipeline(bool fuse) { return DefaultPipeline(fuse, WeightCompressionOptions{}); }

std::unique_ptr<PassManager> DefaultPipeline(bool fuse, const WeightCompressionOptions& weights) {
  auto manager = std::make_unique<PassManager>();
  // Vendor ops first, with or without fusion: no kernel runs them as they
  // come. Shape inference before each round gives the lowerings the ranks
  // they read.
  std::vector<std::unique_ptr<Pass>> vendor;
  vendor.push_back(MakeShapeInferencePass());
  vendor.push_back(MakeContribLoweringPass());
  manager->AddStage("lower_vendor", std::move(vendor), kMaxVendorRounds);
  manager->AddStage("simplify", SimplifyPasses());
  if (fuse) {
    std::vector<std::unique_ptr<Pass>> fusions;
    fusions.push_back(MakeAttentionFusionPass());
    // A fused layer's output has the query's shape, which the next layer's
    // candidate needs to be proven, and so may the canonicalisation that
    // brings that layer to the patterns: a KV-cache layer whose query length
    // only the fused layer before it proves (GPT-NeoX's zero baddbmm base).
    for (auto& pass : SimplifyPasses()) fusions.push_back(std::move(pass));
    manager->AddStage("fuse", std::move(fusions), kMaxFuseIterations);
    // Activations and norms, after attention (whose patterns never contain
    // them): stopping after one of these shows every attention fused.
    std::vector<std::unique_ptr<Pass>> op_fusions;
    op_fusions.push_back(MakeElementwiseFusionPass());
    op_fusions.push_back(MakeRmsNormFusionPass());
    op_fusions.push_back(MakeSkipNormFusionPass());  // after it: RMS norms are written out until then
    op_fusions.push_back(MakeConvBatchNormFoldPass());
    manager->AddStage("fuse_ops", std::move(op_fusions));
  }
  // After the fusions, whose patterns read the float products; before the
  // lowering, whose epilogues and transposed-B forms the compressed products
  // have not. Without compression it takes only 16-bit weights behind a Cast.
  std::vector<std::unique_ptr<Pass>> compress;
  compress.push_back(MakeWeightCompressionPass(weights));
  manager->AddStage("compress_weights", std::move(compress));
  if (fuse) {
    // After the attention fusion, whose patterns read MatMul(Q, Transpose(K)).
    std::vector<std::unique_ptr<Pass>> lower;
    lower.push_back(MakeTransposedMatMulPass());
    // After it, so that a product whose B it reads in place keeps that, and
    // after the op fusions, which write the activations this folds.
    lower.push_back(MakeProductEpilogueFusionPass());
    // After the BatchNorm fold (fuse_ops), whose Conv it extends; before the
    // chains, which would take a Conv's Add and Relu otherwise.
    lower.push_back(MakeConvEpilogueFusionPass());
    // After it: a residual read by a Conv is part of its layout decision.
    lower.push_back(MakeConvLayoutPass());
    // Last: what no fused op describes (a Relu the products did not take).
    lower.push_back(MakeElementwiseChainPass());
    manager->AddStage("lower", std::move(lower));
  }
  std::vector<std::unique_ptr<Pass>> cleanup;
  cleanup.push_back(MakeDeadCodePass());
  cleanup.push_back(MakeShapeInferencePass());
  manager->AddStage("cleanup", std::move(cleanup));
  return manager;
}

}  // namespace attune
