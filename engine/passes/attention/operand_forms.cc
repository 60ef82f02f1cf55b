#include "engine/passes/attention/operand_forms.h"

#include <functional>
#include <optional>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "engine/pattern/constants.h"
#include "engine/pattern/pattern.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

using pattern::Any;
using pattern::Capture;
using pattern::Match;
using pattern::OneOf;
using pattern::Op;
using pattern::Pattern;
using Reason = std::string;

std::string Quote(const Value* v) { return absl::StrCat("'", v->name(), "'"); }
std::string IntsText(const std::vector<int64_t>& v) { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }
std::string RankText(const Value* v) {
  return RankOf(v) == 0 ? std::string("an unknown rank") : absl::StrCat("rank ", RankOf(v));
}

bool KnownEqual(const Dim& a, const Dim& b) { return !a.is_unknown() && a == b; }

std::optional<int64_t> KnownValue(const Dim& d) {
  if (d.is_known()) return d.value();
  return std::nullopt;
}

// a · b, or nullopt on overflow (dims of a hostile model may be anything).
std::optional<int64_t> Times(int64_t a, int64_t b) {
  int64_t p;
  if (__builtin_mul_overflow(a, b, &p)) return std::nullopt;
  return p;
}

// Runs `form` at `value`; `check` reads each complete match into the result
// or says why it is not one. The miss is NotFound when the match failed
// before `near` nodes of the form had matched (no check sits on a form's
// first node, so one matched node means the value is produced by its op).
template <typename T>
absl::StatusOr<T> Find(const char* form, const Pattern& p, const Value* value,
                       const std::function<std::variant<T, Reason>(const Match&)>& check, size_t near = 1) {
  std::optional<T> found;
  pattern::MatchResult r = pattern::MatchValue(p, value, [&](const Match& m) -> std::optional<Reason> {
    std::variant<T, Reason> result = check(m);
    if (auto* why = std::get_if<Reason>(&result)) return *why;
    found = std::get<T>(std::move(result));
    return std::nullopt;
  });
  if (r.matched && found) return *std::move(found);
  const std::string why = absl::StrCat("not ", form, ": ", r.failure);
  if (r.failure_progress < near) return absl::NotFoundError(why);
  return absl::FailedPreconditionError(why);
}

// The constant target of a Reshape, when it is one.
std::optional<std::vector<int64_t>> ReshapeTarget(const Node& reshape) {
  const Tensor* t = pattern::ConstantOf(reshape.input(1));
  if (t == nullptr) return std::nullopt;
  return pattern::TensorAsInts(*t);
}

bool AllowsZeroCopy(const Node& reshape) { return reshape.attributes().GetInt("allowzero", 0).value_or(0) == 0; }

// Whether the constant target entry `want` keeps input dim `in`.
bool TargetKeepsDim(const Node& reshape, int64_t want, const Dim& in) {
  if (want == 0) return AllowsZeroCopy(reshape);
  return in.is_known() && in.value() == want;
}

std::optional<std::vector<int64_t>> UnsqueezeAxes(const Node& n) {
  if (n.attributes().Has("axes")) {
    auto axes = n.attributes().GetInts("axes");
    if (axes.ok()) return *axes;
    return std::nullopt;
  }
  const Tensor* t = pattern::ConstantOf(n.input(1));
  if (t == nullptr) return std::nullopt;
  return pattern::TensorAsInts(*t);
}

pattern::NodeCheck NewAxisAfterHeads() {
  return [](const Node& n, const Match&) -> std::optional<Reason> {
    auto axes = UnsqueezeAxes(n);
    if (!axes) return Reason("its axes are not constant");
    if (axes->size() != 1 || ((*axes)[0] != 2 && (*axes)[0] != -3))
      return absl::StrCat("axes ", IntsText(*axes), ", expected [2]: one new axis after the KV heads");
    return std::nullopt;
  };
}

std::optional<Reason> GroupRepeats(const Tensor& t) {
  auto r = pattern::TensorAsInts(t);
  if (!r || r->size() != 5 || (*r)[0] != 1 || (*r)[1] != 1 || (*r)[3] != 1 || (*r)[4] != 1)
    return absl::StrCat("repeats ", r ? IntsText(*r) : std::string("that are not integers"),
                        ", expected [1, 1, G, 1, 1]");
  return std::nullopt;
}

// x and y agree on batch, tokens and head size (dims 0, 2, 3).
std::optional<Reason> SameButHeads(const Value* x, const Value* y) {
  for (int i : {0, 2, 3})
    if (!KnownEqual(DimOf(x, i), DimOf(y, i)))
      return absl::StrCat("dim ", i, " of ", Quote(x), " (", DimOf(x, i).ToString(), ") is not provably that of ",
                          Quote(y), " (", DimOf(y, i).ToString(), ")");
  return std::nullopt;
}

const Pattern& RepeatPattern() {
  static const Pattern p = [] {
    Pattern unsqueeze = Op("Unsqueeze").IgnoreExtraInputs().Check(NewAxisAfterHeads()).CaptureNode("unsqueeze")
                            .Inputs({Capture("source")});
    Pattern expand = Op("Expand").CaptureNode("repeat").IgnoreExtraInputs().Inputs({unsqueeze});
    Pattern tile = Op("Tile").CaptureNode("repeat").IgnoreExtraInputs().Inputs(
        {unsqueeze, Capture("repeats", pattern::ConstantWhere("repeats [1, 1, G, 1, 1]", GroupRepeats))});
    Pattern grouped =
        Op("Reshape").CaptureNode("reshape").IgnoreExtraInputs().Inputs({Capture("expanded", OneOf({expand, tile}))});
    // One K/V head broadcast to all query heads.
    Pattern single = Op(std::vector<std::string>{"Expand", "Tile"}).CaptureNode("repeat").IgnoreExtraInputs().Inputs({Capture("source")});
    return OneOf({grouped, single});
  }();
  return p;
}

std::variant<HeadRepeat, Reason> CheckRepeat(const Match& m, const Value* x) {
  const Value* y = m.value("source");
  const Node* rep = m.node("repeat");
  if (RankOf(x) != 4) return absl::StrCat(Quote(x), " has ", RankText(x), ", expected rank 4");
  if (RankOf(y) != 4) return absl::StrCat(Quote(y), " has ", RankText(y), ", expected rank 4");
  const Node* reshape = m.node("reshape");
  if (reshape == nullptr) {
    if (KnownValue(DimOf(y, 1)) != std::optional<int64_t>(1))
      return absl::StrCat(Quote(y), " has ", DimOf(y, 1).ToString(), " heads, not one head to broadcast");
    auto h = KnownValue(DimOf(x, 1));
    if (!h) return absl::StrCat("the heads of ", Quote(x), " (", DimOf(x, 1).ToString(), ") are not a known number");
    if (auto why = SameButHeads(x, y)) return *why;
    return HeadRepeat{y, *h, {rep}};
  }
  const Value* e = m.value("expanded");
  if (RankOf(e) != 5)
    return absl::StrCat(rep->Describe(), " gives ", RankText(e),
                        ", expected rank 5 (batch, KV heads, group, tokens, head size)");
  std::optional<int64_t> groups = KnownValue(DimOf(e, 2));
  if (const Value* reps = m.value("repeats")) groups = (*pattern::TensorAsInts(*pattern::ConstantOf(reps)))[2];
  if (!groups) return absl::StrCat("the group size (dim 2 of ", Quote(e), ") is not a known number");
  if (*groups < 1) return absl::StrCat("the group size ", *groups, " is not positive");
  // Only the new axis may grow: every other dim of the repeat equals y's.
  const int kept[] = {0, 1, 3, 4};
  for (int i = 0; i < 4; ++i)
    if (!KnownEqual(DimOf(e, kept[i]), DimOf(y, i)))
      return absl::StrCat(rep->Describe(), " changes dim ", i, " of ", Quote(y), " (", DimOf(y, i).ToString(), " to ",
                          DimOf(e, kept[i]).ToString(), "): only the group axis may grow");
  auto hkv = KnownValue(DimOf(y, 1));
  auto h = KnownValue(DimOf(x, 1));
  if (!hkv || !h || Times(*hkv, *groups) != h)
    return absl::StrCat(Quote(x), " has ", DimOf(x, 1).ToString(), " heads, not ", DimOf(y, 1).ToString(),
                        " KV heads times ", *groups);
  if (auto why = SameButHeads(x, y)) return *why;
  return HeadRepeat{y, *groups, {reshape, rep, m.node("unsqueeze")}};
}

std::variant<HeadSplit, Reason> CheckHeadSplit(const Match& m, const Value* out) {
  const Node& reshape = *m.node("split");
  const Value* in = m.value("projection");
  if (RankOf(in) != 3)
    return absl::StrCat("it reads ", Quote(in), " of ", RankText(in), ", not a (batch, tokens, hidden) projection");
  const std::optional<int64_t> c = KnownValue(DimOf(in, 2));
  if (RankOf(out) == 4) {
    auto h = KnownValue(DimOf(out, 2));
    auto d = KnownValue(DimOf(out, 3));
    // Same batch and C = H·D: the element count then forces the same T too.
    if (h && d && c && Times(*h, *d) == c && KnownEqual(DimOf(out, 0), DimOf(in, 0)))
      return HeadSplit{in, *h, *d, &reshape};
  }
  auto target = ReshapeTarget(reshape);
  if (!target) return Reason("its output's heads and head size are not known numbers, nor is its target a constant");
  const std::vector<int64_t>& s = *target;
  const std::string text = IntsText(s);
  if (s.size() != 4)
    return absl::StrCat("target ", text, " has ", s.size(), " entries, expected (batch, tokens, heads, head size)");
  if (!TargetKeepsDim(reshape, s[0], DimOf(in, 0)) || !TargetKeepsDim(reshape, s[1], DimOf(in, 1)))
    return absl::StrCat("target ", text, " does not keep the batch and tokens of ", Quote(in), " (",
                        SymbolicShapeToString(*in->shape()), ")");
  int64_t h = s[2], d = s[3];
  if (h == -1 && d > 0 && c && *c % d == 0) h = *c / d;
  if (d == -1 && h > 0 && c && *c % h == 0) d = *c / h;
  if (h <= 0 || d <= 0)
    return absl::StrCat("target ", text, " does not give the heads and head size of a hidden size of ",
                        DimOf(in, 2).ToString());
  if (c && Times(h, d) != c) return absl::StrCat(h, " heads of ", d, " do not make the hidden size ", *c);
  return HeadSplit{in, h, d, &reshape};
}

std::optional<Reason> CheckHeadMergeDims(const Node& r, const Value* y4, int64_t heads, int64_t v_head_dim) {
  if (heads <= 0 || v_head_dim <= 0) return Reason("the heads or the head size are not known numbers");
  const std::optional<int64_t> hidden = Times(heads, v_head_dim);
  if (!hidden) return Reason("heads times head size overflows");
  const Value* out = r.output(0);
  if (RankOf(out) == 3 && RankOf(y4) == 4) {
    // Same batch and H·Dv: the element count then forces the same T too.
    if (KnownEqual(DimOf(out, 0), DimOf(y4, 0)) && KnownValue(DimOf(out, 2)) == hidden &&
        KnownValue(DimOf(y4, 1)).value_or(heads) == heads && KnownValue(DimOf(y4, 3)).value_or(v_head_dim) == v_head_dim)
      return std::nullopt;
  }
  auto target = ReshapeTarget(r);
  if (target && target->size() == 3) {
    const auto& s = *target;
    if (TargetKeepsDim(r, s[0], DimOf(y4, 0)) && TargetKeepsDim(r, s[1], DimOf(y4, 2)) &&
        (s[2] == *hidden || s[2] == -1))
      return std::nullopt;
  }
  return absl::StrCat("it does not give (batch, tokens, ", *hidden, ") from ", Quote(y4), " (",
                      y4->shape() ? SymbolicShapeToString(*y4->shape()) : std::string("?"), ")");
}

}  // namespace

int RankOf(const Value* value) {
  if (value == nullptr || !value->shape().has_value()) return 0;
  return static_cast<int>(value->shape()->size());
}

Dim DimOf(const Value* value, int i) {
  const int rank = RankOf(value);
  if (rank == 0) return Dim();
  if (i < 0) i += rank;
  if (i < 0 || i >= rank) return Dim();
  return (*value->shape())[i];
}

absl::StatusOr<TransposeStep> FindTranspose(const Value* value) {
  static const Pattern kTranspose = Op("Transpose").CaptureNode("transpose").Inputs({Capture("input")});
  return Find<TransposeStep>("a Transpose the walk can look through", kTranspose, value,
                             [](const Match& m) -> std::variant<TransposeStep, Reason> {
                               const Node& t = *m.node("transpose");
                               // Validated here, so that composing may index with it.
                               absl::StatusOr<Perm> perm = pattern::TransposePerm(t);
                               if (!perm.ok()) return absl::StrCat(t.Describe(), ": ", perm.status().message());
                               return TransposeStep{&t, m.value("input"), *std::move(perm)};
                             });
}

absl::StatusOr<HeadRepeat> FindGroupedRepeat(const Value* x) {
  // A Reshape over anything but an Expand or Tile is some other Reshape, not a near miss.
  return Find<HeadRepeat>(
      "a grouped head repeat", RepeatPattern(), x, [x](const Match& m) { return CheckRepeat(m, x); }, 2);
}

absl::StatusOr<PastConcat> FindPastConcat(const Value* x) {
  static const Pattern kConcat = Op("Concat").CaptureNode("concat").Inputs({Capture("past"), Capture("fresh")});
  std::vector<const Node*> identities;
  const Value* joined = x;
  // The Concat's output must be read by the Identity alone: the fused op replaces both.
  while (joined->producer() != nullptr && joined->producer()->op_type() == "Identity" &&
         joined->producer()->domain().empty() && joined->producer()->input(0) != nullptr &&
         joined->producer()->input(0)->uses().size() == 1 && !joined->producer()->input(0)->is_graph_output()) {
    identities.push_back(joined->producer());
    joined = joined->producer()->input(0);
  }
  auto found = Find<PastConcat>("a KV-cache Concat", kConcat, joined, [x](const Match& m) -> std::variant<PastConcat, Reason> {
    const Node& concat = *m.node("concat");
    auto axis = concat.attributes().GetInt("axis");
    if (!axis.ok()) return absl::StrCat(concat.Describe(), " has no axis");
    if (*axis != 2 && *axis != -2) return absl::StrCat(concat.Describe(), " joins axis ", *axis, ", not the tokens (2)");
    for (const Value* v : {x, m.value("past"), m.value("fresh")})
      if (RankOf(v) != 4) return absl::StrCat(Quote(v), " has ", RankText(v), ", expected rank 4");
    return PastConcat{m.value("past"), m.value("fresh"), &concat, {}};
  });
  if (found.ok()) found->identities = std::move(identities);
  return found;
}

absl::StatusOr<HeadSplit> FindHeadSplit(const Value* x) {
  static const Pattern kSplit = Op("Reshape").CaptureNode("split").IgnoreExtraInputs().Inputs({Capture("projection")});
  return Find<HeadSplit>("a head split", kSplit, x, [x](const Match& m) -> std::variant<HeadSplit, Reason> {
    std::variant<HeadSplit, Reason> split = CheckHeadSplit(m, x);
    if (auto* why = std::get_if<Reason>(&split)) return absl::StrCat(m.node("split")->Describe(), ": ", *why);
    return split;
  });
}

absl::StatusOr<HeadMerge> FindHeadMerge(const Value* y4, int64_t heads, int64_t v_head_dim) {
  // The merge reads forward from y4; the matcher reads back from its end.
  auto only_reader = [](const Value* v) -> const Node* {
    return v != nullptr && !v->is_graph_output() && v->uses().size() == 1 ? v->uses()[0].node : nullptr;
  };
  const Node* t = only_reader(y4);
  const Node* r = t != nullptr && t->num_outputs() == 1 ? only_reader(t->output(0)) : nullptr;
  if (r == nullptr || r->num_outputs() != 1 || r->output(0) == nullptr)
    return absl::NotFoundError(absl::StrCat("not a head merge: ", Quote(y4), " is not read by one node read by one node"));
  static const Pattern kMerge =
      Op("Reshape").CaptureNode("merge").IgnoreExtraInputs().Inputs(
          {Op("Transpose").CaptureNode("transpose").Attr("perm", pattern::Ints{0, 2, 1, 3}).Inputs({Capture("y4")})});
  return Find<HeadMerge>("a head merge", kMerge, r->output(0),
                         [&](const Match& m) -> std::variant<HeadMerge, Reason> {
                           if (m.node("transpose") != t || m.value("y4") != y4)
                             return absl::StrCat(r->Describe(), " does not reshape the transpose of ", Quote(y4));
                           if (auto why = CheckHeadMergeDims(*r, y4, heads, v_head_dim))
                             return absl::StrCat(r->Describe(), ": ", *why);
                           return HeadMerge{r->output(0), {t, r}};
                         });
}

}  // namespace attune::attention
