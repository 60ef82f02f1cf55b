// Folds an inference BatchNormalization into the Conv before it: with
// a = scale / sqrt(var + eps) per output channel, Conv(x, W, B) followed by
// the norm equals Conv(x, W * a, (B - mean) * a + beta). The new weights and
// bias are new constants (the old ones may have other readers), and the new
// Conv takes the BatchNormalization's place and name. Every Conv followed by
// a BatchNormalization that is not folded is reported with the reason.
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/passes/passes.h"

namespace attune {
namespace {

constexpr const char* kRule = "conv_batchnorm";

// The float32 constant of `v` with `count` elements, or nullptr.
const Tensor* FloatConstant(const Value* v, int64_t count) {
  if (v == nullptr || v->constant() == nullptr) return nullptr;
  const Tensor* t = v->constant();
  return t->type() == ElementType::kFloat32 && t->num_elements() == count ? t : nullptr;
}

// The first reason the pair cannot fold, or "" when it can.
std::string CheckFold(const Node& conv, const Node& bn) {
  if (!conv.domain().empty() || !bn.domain().empty()) return "not the default domain";
  Value* y = conv.output(0);
  if (y->uses().size() != 1 || y->is_graph_output()) return "the Conv output has other readers";
  if (bn.num_inputs() != 5 || bn.num_outputs() != 1) return "BatchNormalization is not in inference form";
  auto training = bn.attributes().GetInt("training_mode", 0);
  auto spatial = bn.attributes().GetInt("spatial", 1);
  if (!training.ok() || *training != 0 || !spatial.ok() || *spatial != 1)
    return "BatchNormalization is not in inference form";
  const Value* w = conv.input(1);
  if (w == nullptr || w->constant() == nullptr || w->constant()->type() != ElementType::kFloat32)
    return "the Conv weights are not a float32 constant";
  if (w->constant()->rank() < 3) return "the Conv weights have rank below 3";
  const int64_t m = w->constant()->shape()[0];
  if (conv.num_inputs() > 2 && conv.input(2) != nullptr && FloatConstant(conv.input(2), m) == nullptr)
    return "the Conv bias is not a float32 constant";
  for (int i = 1; i < 5; ++i)
    if (FloatConstant(bn.input(i), m) == nullptr)
      return absl::StrCat("BatchNormalization input ", i, " is not a float32 constant of ", m, " elements");
  return "";
}

class ConvBatchNormFoldPass final : public Pass {
 public:
  std::string_view name() const override { return "conv_batchnorm_fold"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext& context) override {
    bool changed = false;
    for (Node* bn : graph.nodes()) {
      if (bn->op_type() != "BatchNormalization" || bn->input(0) == nullptr) continue;
      Node* conv = bn->input(0)->producer();
      if (conv == nullptr || conv->op_type() != "Conv") continue;
      const std::string reason = CheckFold(*conv, *bn);
      if (!reason.empty()) {
        AddRejection(context.report, {bn->name(), kRule, reason});
        continue;
      }
      Fold(graph, conv, bn);
      changed = true;
    }
    if (changed) graph.RemoveDeadNodes();
    return changed;
  }

 private:
  static void Fold(Graph& graph, Node* conv, Node* bn) {
    const Tensor& w = *conv->input(1)->constant();
    const int64_t m = w.shape()[0], per = w.num_elements() / m;
    auto epsilon = bn->attributes().GetFloat("epsilon", 1e-5f);
    const double eps = epsilon.ok() ? *epsilon : 1e-5;
    const float* scale = bn->input(1)->constant()->data<float>();
    const float* beta = bn->input(2)->constant()->data<float>();
    const float* mean = bn->input(3)->constant()->data<float>();
    const float* var = bn->input(4)->constant()->data<float>();
    const Value* b = conv->num_inputs() > 2 ? conv->input(2) : nullptr;
    Tensor new_w = w.Clone();
    auto new_b = Tensor::Create(ElementType::kFloat32, {m});
    for (int64_t c = 0; c < m; ++c) {
      const double a = static_cast<double>(scale[c]) / std::sqrt(static_cast<double>(var[c]) + eps);
      float* row = new_w.data<float>() + c * per;
      for (int64_t i = 0; i < per; ++i) row[i] = static_cast<float>(row[i] * a);
      const double bias = b != nullptr ? b->constant()->data<float>()[c] : 0.0;
      new_b->data<float>()[c] = static_cast<float>((bias - mean[c]) * a + beta[c]);
    }
    Value* w_value = graph.AddConstant(graph.UniqueName(absl::StrCat(conv->name(), "_folded_W")), std::move(new_w));
    Value* b_value = graph.AddConstant(graph.UniqueName(absl::StrCat(conv->name(), "_folded_B")), *std::move(new_b));
    // A Conv in the BatchNorm's place writes its output (a graph output keeps
    // its name); the old Conv, read by nobody now, is removed as dead.
    graph.ReplaceNode(bn, "Conv", "", {conv->input(0), w_value, b_value}, conv->attributes());
  }
};

}  // namespace

std::unique_ptr<Pass> MakeConvBatchNormFoldPass() { return std::make_unique<ConvBatchNormFoldPass>(); }

}  // namespace attune
