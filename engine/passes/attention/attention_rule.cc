// The attention rule: the stages of attention_stages.h run in order on a
// structural match; the first that fails gives the reason. Stages 1 to 3 (the
// matched structure, the scale, the operands) are here; the mask is
// mask_decision.cc, the plan of the fused node fused_node_plan.cc.
#include "engine/passes/attention/attention_rule.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/schema/multi_head_attention.h"
#include "engine/passes/attention/attention_stages.h"
#include "engine/passes/attention/broadcast_check.h"
#include "engine/passes/attention/operands.h"
#include "engine/pattern/constants.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

namespace c = captures;

std::optional<Reason> CheckSoftmaxAxis(const Graph& graph, const Node& softmax, int rank) {
  const int opset = graph.OpsetFor("");
  const int64_t default_axis = opset != 0 && opset < 13 ? 1 : -1;
  const int64_t axis = softmax.attributes().GetInt("axis", default_axis).value_or(default_axis);
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  // Before opset 13 Softmax flattens the dims from `axis` on: only axis = rank-1 is per key row.
  if (normalized != rank - 1)
    return absl::StrCat("softmax axis is not the key axis (axis ", axis, " of rank ", rank, ")");
  return std::nullopt;
}

// The product of the scale factors the variant captured under `prefixes`, or why there is none.
std::variant<double, Reason> ScaleFactor(const pattern::Match& m, std::initializer_list<const char*> prefixes) {
  double scale = 1.0;
  for (const char* prefix : prefixes) {
    for (const char* kind : {"_div", "_mul"}) {
      const Value* operand = m.value(absl::StrCat(prefix, kind));
      if (operand == nullptr) continue;
      const Tensor* t = pattern::ConstantOf(operand);
      if (t == nullptr) return Reason(absl::StrCat("scale is not a constant (", Quote(operand), ")"));
      auto x = pattern::UniformValue(*t);
      if (!x) return Reason(absl::StrCat("scale is not one number (", Quote(operand), ")"));
      scale = kind[1] == 'd' ? scale / *x : scale * *x;
    }
  }
  if (!std::isfinite(scale) || scale == 0.0) return Reason(absl::StrCat("scale ", scale, " is not finite and non-zero"));
  return scale;
}

// Whether `to` holds every value of `of` exactly: the type itself, or a wider float.
bool HoldsEveryValueOf(ElementType to, ElementType of) {
  if (to == of || to == ElementType::kFloat64) return true;
  return to == ElementType::kFloat32 && (of == ElementType::kFloat16 || of == ElementType::kBFloat16);
}

// Every Cast the match looked through (around the softmax, or a no-op one
// between two steps) must lose nothing of the attention's type: the fused op
// computes in float32 and rounds once to that type, so a Cast to it or to a
// wider float is what it does, but a Cast to a narrower type (float32 scores
// or probabilities rounded to float16, float16 ones to bfloat16) changes
// values the fused op would not change.
std::optional<Reason> CheckCasts(const pattern::Match& m, ElementType type) {
  if (type == ElementType::kUndefined) return std::nullopt;
  for (const Node* n : m.nodes()) {
    if (n->op_type() != "Cast") continue;
    const ElementType to = static_cast<ElementType>(n->attributes().GetInt("to", 0).value_or(0));
    if (!HoldsEveryValueOf(to, type))
      return absl::StrCat(n->Describe(), " casts to ", ElementTypeName(to), ", which rounds the ",
                          ElementTypeName(type), " values of the attention: the fused op would not");
  }
  return std::nullopt;
}

// float16's largest finite value is 65504; a product of 65520 or more rounds to +inf.
constexpr double kFloat16Overflow = 65520.0;

std::variant<Operands, Reason> ResolveOperands(const pattern::Match& m, int rank, bool allow_repeat, bool allow_past) {
  ResolveOptions kv;
  kv.look_through_repeat = allow_repeat && rank == 4;
  kv.look_through_past = allow_past && rank == 4;
  absl::StatusOr<HeadOperand> k;
  if (const Value* kt = m.value(c::kKt)) {
    k = ResolveOperand(kt, SwapLastTwo(rank), rank, kv);
  } else {
    // Kᵀ = Transpose(K · scale): K is that tensor under the transpose's perm
    // composed with the swap, which needs the perm itself (never a guess).
    const Node& t = *m.node(c::kKtTranspose);
    absl::StatusOr<Perm> perm = pattern::TransposePerm(t);
    if (!perm.ok()) return Reason(absl::StrCat("cannot read K through ", t.Describe(), ": ", perm.status().message()));
    const std::optional<Perm> k_perm = ComposePerms(*perm, SwapLastTwo(rank));
    if (!k_perm)
      return Reason(absl::StrCat("cannot read K through ", t.Describe(), ": it permutes ", perm->size(),
                                 " dims, the scores have ", rank));
    k = ResolveOperand(m.value(c::kKtBase), *k_perm, rank, kv);
  }
  absl::StatusOr<HeadOperand> q = ResolveOperand(m.value(c::kQ), {}, rank, {});
  absl::StatusOr<HeadOperand> v = ResolveOperand(m.value(c::kV), {}, rank, kv);
  for (const absl::StatusOr<HeadOperand>* op : {&q, &k, &v})
    if (!op->ok()) return Reason(std::string(op->status().message()));
  return Operands{*std::move(q), *std::move(k), *std::move(v), {}};
}

using NamedOperand = std::pair<const char*, const HeadOperand*>;

// What the operand walks noted, for a rejection that follows from what they
// found: " (K and V ...; V: not a grouped head repeat: ...)", or nothing.
std::string WalkNotes(const Operands& ops, std::initializer_list<NamedOperand> operands) {
  std::vector<std::string> parts = ops.notes;
  for (const auto& [name, op] : operands)
    for (const std::string& miss : op->misses) parts.push_back(absl::StrCat(name, ": ", miss));
  return parts.empty() ? "" : absl::StrCat(" (", absl::StrJoin(parts, "; "), ")");
}

// A view of the masked scores must give them the scores' own shape, and keep
// every dim but the keys', so that it only checks their count: then it is a
// relabelling the fused op needs not do, where it does not fail.
std::optional<Reason> CheckMaskView(const pattern::Match& m, const Node& scores, int rank) {
  const Node* view = m.node(c::kMaskView);
  if (view == nullptr) return std::nullopt;
  const Value* in = view->input(0);
  const Value* out = view->output(0);
  const Value* s = scores.output(0);
  if (RankOf(in) != rank || RankOf(out) != rank || RankOf(s) != rank)
    return Reason(absl::StrCat(view->Describe(), " views the masked scores to another rank"));
  for (int d = 0; d < rank; ++d) {
    const Dim& o = (*out->shape())[d];
    const bool kept = d + 1 == rank || (*in->shape())[d] == o;
    if (!kept || !(o == (*s->shape())[d]))
      return Reason(absl::StrCat(view->Describe(), " views the masked scores ", SymbolicShapeToString(*in->shape()),
                                 " as ", SymbolicShapeToString(*out->shape()), ", not as the scores' ",
                                 SymbolicShapeToString(*s->shape())));
  }
  return std::nullopt;
}

}  // namespace

std::variant<int, Reason> CheckStructure(const Graph& graph, const pattern::Match& m) {
  const Node* softmax = m.node(c::kSoftmax);
  const Node* scores = m.node(c::kScores);
  const Node* pv = m.node(c::kOutputMatMul);
  const Value* q = m.value(c::kQ);

  int rank = RankOf(scores->output(0));
  if (rank == 0) rank = RankOf(q);
  if (rank == 0) return Reason("the rank of the scores is unknown");
  if (rank != 3 && rank != 4)
    return Reason(absl::StrCat("scores have rank ", rank, ", expected 3 (one head) or 4 (batch, heads, queries, keys)"));
  const int softmax_rank = RankOf(softmax->input(0));
  if (softmax_rank != 0 && softmax_rank != rank)
    return Reason(absl::StrCat("the mask turns rank-", rank, " scores into rank ", softmax_rank));
  if (auto why = CheckSoftmaxAxis(graph, *softmax, rank)) return *why;
  if (auto why = CheckMatMulBroadcast(*scores, rank, "Q", "K^T")) return *why;
  if (auto why = CheckMatMulBroadcast(*pv, rank, "the probabilities", "V")) return *why;
  if (auto why = CheckMaskView(m, *scores, rank)) return *why;
  // The probabilities (and Identity copies of them) may be read outside: the
  // weights stage decides (DecideWeights).
  if (auto why = pattern::CheckInternalUses(m, pv, ProbabilityNodes(m))) return *why;
  return rank;
}

std::variant<ScaleDecision, Reason> DecideScale(const pattern::Match& m, const AttentionVariant& variant) {
  auto scale_or = ScaleFactor(m, {c::kScale, c::kInnerScale, c::kQScale, c::kKScale});
  if (auto* why = std::get_if<Reason>(&scale_or)) return *why;
  ScaleDecision d;
  d.scale = std::get<double>(scale_or);
  if (variant.softcap) {
    const double a = *m.number(c::kSoftcapDiv), b = *m.number(c::kSoftcapMul);
    if (a != b || !(a > 0) || !std::isfinite(a))
      return Reason(absl::StrCat("softcap divisor ", a, " and multiplier ", b, " are not one positive number"));
    d.softcap = a;
  }
  return d;
}

std::variant<Operands, Reason> DecideOperands(const pattern::Match& m, int rank) {
  // K as the score MatMul reads it: a scale on K of a higher rank could broadcast it.
  const Value* k_read = m.value(c::kKt) != nullptr ? m.value(c::kKt) : m.value(c::kKtBase);
  for (const Value* operand : {m.value(c::kQ), k_read, m.value(c::kV)}) {
    const int r = RankOf(operand);
    if (r != 0 && r != rank) return Reason(absl::StrCat("operand ", Quote(operand), " has rank ", r, ", scores ", rank));
  }
  Operands ops;
  std::vector<std::string> notes;
  auto resolve = [&](bool allow_repeat, bool allow_past) -> std::optional<Reason> {
    auto resolved = ResolveOperands(m, rank, allow_repeat, allow_past);
    if (auto* why = std::get_if<Reason>(&resolved)) return *why;
    ops = std::get<Operands>(std::move(resolved));
    ops.notes = notes;
    return std::nullopt;
  };
  if (auto why = resolve(true, true)) return *why;
  if ((ops.k.past == nullptr) != (ops.v.past == nullptr)) {
    notes.push_back(absl::StrCat(ops.k.past != nullptr ? "K" : "V", " reads a KV cache and ",
                                 ops.k.past != nullptr ? "V" : "K", " does not, so neither is read through one"));
    if (auto why = resolve(true, false)) return *why;
  }
  if (ops.k.groups != ops.v.groups) {
    notes.push_back(absl::StrCat("K and V repeat their heads differently (", ops.k.groups, " and ", ops.v.groups,
                                 " times), so neither is read through its repeat"));
    if (auto why = resolve(false, ops.k.past != nullptr)) return *why;
  }
  const ElementType type = m.value(c::kQ)->type();
  ops.type = type;
  // The fused kernels accumulate in float32; fusing a float64 graph would silently lose precision.
  if (type == ElementType::kFloat64) return Reason("Q is float64 and the fused attention kernels compute in float32");
  if (auto why = CheckCasts(m, type)) return *why;
  return ops;
}

std::optional<Reason> DecideScoreLimit(const pattern::Match& m, ElementType type, ScaleDecision& scale) {
  // float16 scores overflow to +-inf where |Q·K| (times the factors applied
  // before and at the MatMul's output) reaches 65520; the fused op computes
  // them in float32, so it is told where the subgraph's scores become
  // infinite (score_limit) and gives what the subgraph gives there.
  if (type == ElementType::kFloat16) {
    auto before = ScaleFactor(m, {c::kQScale, c::kKScale});
    auto after = ScaleFactor(m, {c::kScale, c::kInnerScale});
    if (auto* why = std::get_if<Reason>(&before)) return *why;
    if (auto* why = std::get_if<Reason>(&after)) return *why;
    const double pre = std::fabs(std::get<double>(before)), post = std::fabs(std::get<double>(after));
    // A factor above 1 makes where the scores overflow depend on where a
    // Cast sits between the steps (and on Q·c overflowing by itself).
    if (pre > 1.0 || post > 1.0)
      return Reason(absl::StrCat("float16 scores scaled by a factor above 1 (", pre * post,
                                 "): where they overflow is not modelled"));
    scale.score_limit = kFloat16Overflow / pre;
  }
  return std::nullopt;
}

std::optional<Reason> CheckOperandTypes(const pattern::Match& m, int rank, const Operands& ops) {
  const ElementType type = ops.type;
  for (const auto& [name, op] : {NamedOperand{"K", &ops.k}, NamedOperand{"V", &ops.v}}) {
    const Value* val = op->value != nullptr ? op->value : op->base;
    if (type != ElementType::kUndefined && val->type() != ElementType::kUndefined && val->type() != type)
      return Reason(absl::StrCat("Q is ", ElementTypeName(type), " but ", Quote(val), " is ",
                                 ElementTypeName(val->type()), WalkNotes(ops, {{name, op}})));
  }
  const Value* out4 = m.node(c::kOutputMatMul)->output(0);
  if (type != ElementType::kUndefined && out4->type() != ElementType::kUndefined && out4->type() != type)
    return Reason(absl::StrCat("the output is ", ElementTypeName(out4->type()), " but Q is ", ElementTypeName(type)));
  if (rank == 4 && ops.q.heads > 0 && ops.k.heads > 0) {
    if (ops.q.heads % ops.k.heads != 0)
      return Reason(absl::StrCat(ops.q.heads, " query heads are not a multiple of ", ops.k.heads, " key heads",
                                 WalkNotes(ops, {{"Q", &ops.q}, {"K", &ops.k}})));
    if (ops.v.heads > 0 && ops.v.heads != ops.k.heads)
      return Reason(absl::StrCat("K has ", ops.k.heads, " heads but V has ", ops.v.heads,
                                 WalkNotes(ops, {{"K", &ops.k}, {"V", &ops.v}})));
  }
  return std::nullopt;
}

std::variant<AttentionRewrite, std::string> CheckAttention(const Graph& graph, const pattern::Match& m,
                                                           const AttentionVariant& variant,
                                                           const PassContext& context, MaskChainMemo* memo) {
  auto rank_or = CheckStructure(graph, m);
  if (auto* why = std::get_if<Reason>(&rank_or)) return *why;
  const int rank = std::get<int>(rank_or);
  auto weights_or = DecideWeights(m, rank);
  if (auto* why = std::get_if<Reason>(&weights_or)) return *why;
  const WeightsDecision& weights = std::get<WeightsDecision>(weights_or);

  auto scale_or = DecideScale(m, variant);
  if (auto* why = std::get_if<Reason>(&scale_or)) return *why;
  ScaleDecision& scale = std::get<ScaleDecision>(scale_or);

  auto ops_or = DecideOperands(m, rank);
  if (auto* why = std::get_if<Reason>(&ops_or)) return *why;
  const Operands& ops = std::get<Operands>(ops_or);
  if (auto why = DecideScoreLimit(m, ops.type, scale)) return *why;
  if (auto why = CheckOperandTypes(m, rank, ops)) return *why;

  RewritePlan plan;
  auto mask_or = DecideMask(graph, m, variant, ops.k, *m.node(c::kScores), rank, context, plan, memo);
  if (auto* why = std::get_if<Reason>(&mask_or)) return *why;
  MaskDecision& mask = std::get<MaskDecision>(mask_or);
  if (auto why = FinishMask(m, variant, scale, mask)) return *why;
  auto sinks_or = DecideSinks(m, variant, rank, ops, mask);
  if (auto* why = std::get_if<Reason>(&sinks_or)) return *why;
  if (auto why = CheckWeights(weights, ops, mask, std::get<SinkDecision>(sinks_or))) return *why;

  return PlanFusedNode(m, variant, rank, ops, scale, std::move(mask), std::move(plan),
                       std::get<SinkDecision>(sinks_or), weights);
}

}  // namespace attune::attention
