#include "engine/passes/attention/operands.h"

#include <algorithm>

#include "engine/pattern/constants.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

const Node* ProducerOf(const Value* v, const char* op_type) {
  if (v == nullptr || v->producer() == nullptr) return nullptr;
  const Node* n = v->producer();
  return n->domain().empty() && n->op_type() == op_type ? n : nullptr;
}

bool KnownEqual(const Dim& a, const Dim& b) { return !a.is_unknown() && a == b; }

std::optional<int64_t> KnownValue(const Dim& d) {
  if (d.is_known()) return d.value();
  return std::nullopt;
}

// The constant target of a Reshape, when it is one.
std::optional<std::vector<int64_t>> ReshapeTarget(const Node& reshape) {
  const Tensor* t = pattern::ConstantOf(reshape.input(1));
  if (t == nullptr) return std::nullopt;
  return pattern::TensorAsInts(*t);
}

bool AllowsZeroCopy(const Node& reshape) { return reshape.attributes().GetInt("allowzero", 0).value_or(0) == 0; }

// Whether the constant target entry `want` at position i keeps input dim `in`.
bool TargetKeepsDim(const Node& reshape, int64_t want, const Dim& in) {
  if (want == 0) return AllowsZeroCopy(reshape);
  return in.is_known() && in.value() == want;
}

// Reshape(proj (B, T, C)) -> (B, T, H, D): the heads and head size, or nullopt.
std::optional<std::pair<int64_t, int64_t>> PlainHeadSplit(const Node& reshape) {
  const Value* in = reshape.input(0);
  const Value* out = reshape.output(0);
  if (RankOf(in) != 3) return std::nullopt;
  if (RankOf(out) == 4) {
    auto h = KnownValue(DimOf(out, 2));
    auto d = KnownValue(DimOf(out, 3));
    // Same batch and C = H·D: the element count then forces the same T too.
    auto c = KnownValue(DimOf(in, 2));
    if (h && d && c && *c == *h * *d && KnownEqual(DimOf(out, 0), DimOf(in, 0))) return std::make_pair(*h, *d);
  }
  auto target = ReshapeTarget(reshape);
  if (!target || target->size() != 4) return std::nullopt;
  const auto& s = *target;
  if (!TargetKeepsDim(reshape, s[0], DimOf(in, 0)) || !TargetKeepsDim(reshape, s[1], DimOf(in, 1))) return std::nullopt;
  auto c = KnownValue(DimOf(in, 2));
  int64_t h = s[2], d = s[3];
  if (h == -1 && d > 0 && c && *c % d == 0) h = *c / d;
  if (d == -1 && h > 0 && c && *c % h == 0) d = *c / h;
  if (h <= 0 || d <= 0 || (c && *c != h * d)) return std::nullopt;
  return std::make_pair(h, d);
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

struct Repeat {
  const Value* source;  // (B, Hkv, T, D)
  int64_t groups;
  std::vector<const Node*> nodes;
};

// x (B, Hkv·G, T, D) = Reshape(Expand|Tile(Unsqueeze(y, 2), ..)): y's heads
// each repeated G times in a row, the grouping the fused op uses. Or an
// Expand/Tile of a single-head y.
std::optional<Repeat> FindGroupedRepeat(const Value* x) {
  if (RankOf(x) != 4) return std::nullopt;
  if (const Node* reshape = ProducerOf(x, "Reshape")) {
    const Value* e = reshape->input(0);
    const Node* expand = ProducerOf(e, "Expand");
    const Node* tile = ProducerOf(e, "Tile");
    const Node* rep = expand != nullptr ? expand : tile;
    if (rep == nullptr || RankOf(e) != 5) return std::nullopt;
    const Node* unsqueeze = ProducerOf(rep->input(0), "Unsqueeze");
    if (unsqueeze == nullptr) return std::nullopt;
    auto axes = UnsqueezeAxes(*unsqueeze);
    if (!axes || axes->size() != 1 || ((*axes)[0] != 2 && (*axes)[0] != -3)) return std::nullopt;
    const Value* y = unsqueeze->input(0);
    if (RankOf(y) != 4) return std::nullopt;
    auto groups = KnownValue(DimOf(e, 2));
    if (tile != nullptr) {
      const Tensor* reps = pattern::ConstantOf(tile->input(1));
      auto r = reps ? pattern::TensorAsInts(*reps) : std::nullopt;
      if (!r || r->size() != 5 || (*r)[0] != 1 || (*r)[1] != 1 || (*r)[3] != 1 || (*r)[4] != 1) return std::nullopt;
      groups = (*r)[2];
    }
    if (!groups || *groups < 1) return std::nullopt;
    // Only the new axis may grow: every other dim of the repeat equals y's.
    const int kept[] = {0, 1, 3, 4};
    const int from[] = {0, 1, 2, 3};
    for (int i = 0; i < 4; ++i)
      if (!KnownEqual(DimOf(e, kept[i]), DimOf(y, from[i]))) return std::nullopt;
    auto hkv = KnownValue(DimOf(y, 1));
    auto h = KnownValue(DimOf(x, 1));
    if (!hkv || !h || *h != *hkv * *groups) return std::nullopt;
    if (!KnownEqual(DimOf(x, 0), DimOf(y, 0)) || !KnownEqual(DimOf(x, 2), DimOf(y, 2)) ||
        !KnownEqual(DimOf(x, 3), DimOf(y, 3)))
      return std::nullopt;
    return Repeat{y, *groups, {reshape, rep, unsqueeze}};
  }
  // One K/V head broadcast to all query heads.
  const Node* expand = ProducerOf(x, "Expand");
  const Node* tile = ProducerOf(x, "Tile");
  const Node* rep = expand != nullptr ? expand : tile;
  if (rep == nullptr) return std::nullopt;
  const Value* y = rep->input(0);
  if (RankOf(y) != 4 || KnownValue(DimOf(y, 1)) != std::optional<int64_t>(1)) return std::nullopt;
  auto h = KnownValue(DimOf(x, 1));
  if (!h) return std::nullopt;
  if (!KnownEqual(DimOf(x, 0), DimOf(y, 0)) || !KnownEqual(DimOf(x, 2), DimOf(y, 2)) ||
      !KnownEqual(DimOf(x, 3), DimOf(y, 3)))
    return std::nullopt;
  return Repeat{y, *h, {rep}};
}

struct PastConcat {
  const Value* past;
  const Value* fresh;
  const Node* node;
};

std::optional<PastConcat> FindPastConcat(const Value* x) {
  const Node* concat = ProducerOf(x, "Concat");
  if (concat == nullptr || concat->num_inputs() != 2 || RankOf(x) != 4) return std::nullopt;
  auto axis = concat->attributes().GetInt("axis");
  if (!axis.ok() || (*axis != 2 && *axis != -2)) return std::nullopt;
  const Value* past = concat->input(0);
  const Value* fresh = concat->input(1);
  if (past == nullptr || fresh == nullptr || RankOf(past) != 4 || RankOf(fresh) != 4) return std::nullopt;
  return PastConcat{past, fresh, concat};
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

std::optional<Perm> ComposePerms(const Perm& inner, const Perm& outer) {
  if (inner.size() != outer.size() || !pattern::IsPermutation(inner) || !pattern::IsPermutation(outer))
    return std::nullopt;
  Perm out(outer.size());
  for (size_t j = 0; j < outer.size(); ++j) out[j] = inner[outer[j]];
  return out;
}

bool IsIdentityPerm(const Perm& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

Perm IdentityPerm(int rank) {
  Perm p(rank);
  for (int i = 0; i < rank; ++i) p[i] = i;
  return p;
}

Perm SwapLastTwo(int rank) {
  Perm p(rank);
  for (int i = 0; i < rank; ++i) p[i] = i;
  if (rank >= 2) std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

HeadOperand ResolveOperand(const Value* value, Perm perm, int rank, const ResolveOptions& options) {
  if (perm.empty()) perm = IdentityPerm(rank);
  HeadOperand op;
  op.rank = rank;
  // Walk back through transposes, keeping the deepest value that already is the operand.
  const Value* v = value;
  while (true) {
    if (IsIdentityPerm(perm)) op.value = v;
    const Node* t = ProducerOf(v, "Transpose");
    if (t == nullptr) break;
    auto p = pattern::TransposePerm(*t);
    std::optional<Perm> composed = p ? ComposePerms(*p, perm) : std::nullopt;
    if (!composed) break;
    perm = *std::move(composed);
    v = t->input(0);
    op.nodes.push_back(t);
  }
  op.base = v;
  op.perm = perm;

  if (op.value != nullptr && rank == 4) {
    if (options.look_through_repeat) {
      if (auto repeat = FindGroupedRepeat(op.value)) {
        ResolveOptions rest = options;
        rest.look_through_repeat = false;
        HeadOperand inner = ResolveOperand(repeat->source, {}, rank, rest);
        inner.groups = repeat->groups;
        inner.nodes.insert(inner.nodes.begin(), repeat->nodes.begin(), repeat->nodes.end());
        inner.nodes.insert(inner.nodes.begin(), op.nodes.begin(), op.nodes.end());
        return inner;
      }
    }
    if (options.look_through_past) {
      if (auto cat = FindPastConcat(op.value)) {
        ResolveOptions rest = options;
        rest.look_through_past = false;
        rest.look_through_repeat = false;
        HeadOperand inner = ResolveOperand(cat->fresh, {}, rank, rest);
        inner.past = cat->past;
        inner.present = op.value;
        inner.nodes.insert(inner.nodes.begin(), cat->node);
        inner.nodes.insert(inner.nodes.begin(), op.nodes.begin(), op.nodes.end());
        return inner;
      }
    }
  }

  if (rank == 4 && op.perm == Perm{0, 2, 1, 3}) {
    if (const Node* reshape = ProducerOf(op.base, "Reshape")) {
      if (auto split = PlainHeadSplit(*reshape)) {
        op.projection = reshape->input(0);
        op.heads = split->first;
        op.head_dim = split->second;
        op.nodes.push_back(reshape);
      }
    }
  }
  if (op.value != nullptr) {
    if (rank == 4) {
      if (!op.heads) op.heads = KnownValue(DimOf(op.value, 1)).value_or(0);
      if (!op.head_dim) op.head_dim = KnownValue(DimOf(op.value, 3)).value_or(0);
    } else {
      op.heads = 1;
      op.head_dim = KnownValue(DimOf(op.value, rank - 1)).value_or(0);
    }
  } else if (RankOf(op.base) == rank) {
    // Dims of Transpose(base, perm) read from base.
    if (rank == 4) {
      if (!op.heads) op.heads = KnownValue(DimOf(op.base, static_cast<int>(op.perm[1]))).value_or(0);
      if (!op.head_dim) op.head_dim = KnownValue(DimOf(op.base, static_cast<int>(op.perm[3]))).value_or(0);
    } else {
      op.heads = 1;
      op.head_dim = KnownValue(DimOf(op.base, static_cast<int>(op.perm[rank - 1]))).value_or(0);
    }
  }
  return op;
}

std::optional<HeadMerge> FindHeadMerge(const Value* y4, int64_t heads, int64_t v_head_dim) {
  if (y4->is_graph_output() || y4->uses().size() != 1) return std::nullopt;
  const Node* t = y4->uses()[0].node;
  if (t->op_type() != "Transpose" || !t->domain().empty()) return std::nullopt;
  auto perm = pattern::TransposePerm(*t);
  if (!perm || *perm != Perm{0, 2, 1, 3}) return std::nullopt;
  const Value* tv = t->output(0);
  if (tv == nullptr || tv->is_graph_output() || tv->uses().size() != 1) return std::nullopt;
  const Node* r = tv->uses()[0].node;
  if (r->op_type() != "Reshape" || !r->domain().empty() || r->input(0) != tv) return std::nullopt;
  const Value* out = r->output(0);
  if (heads <= 0 || v_head_dim <= 0) return std::nullopt;
  const int64_t hidden = heads * v_head_dim;
  bool ok = false;
  if (RankOf(out) == 3 && RankOf(y4) == 4) {
    // Same batch and H·Dv: the element count then forces the same T too.
    ok = KnownEqual(DimOf(out, 0), DimOf(y4, 0)) && KnownValue(DimOf(out, 2)) == std::optional<int64_t>(hidden) &&
         KnownValue(DimOf(y4, 1)).value_or(heads) == heads && KnownValue(DimOf(y4, 3)).value_or(v_head_dim) == v_head_dim;
  }
  if (!ok) {
    auto target = ReshapeTarget(*r);
    if (target && target->size() == 3) {
      const auto& s = *target;
      ok = TargetKeepsDim(*r, s[0], DimOf(y4, 0)) && TargetKeepsDim(*r, s[1], DimOf(y4, 2)) &&
           (s[2] == hidden || s[2] == -1);
    }
  }
  if (!ok) return std::nullopt;
  return HeadMerge{out, {t, r}};
}

}  // namespace attune::attention
