#include "engine/passes/attention/operands.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/status_macros.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

std::optional<int64_t> KnownValue(const Dim& d) {
  if (d.is_known()) return d.value();
  return std::nullopt;
}

// A form the walk reached but could not look through is kept with its reason;
// a value not produced by the form's op is simply not that form.
void NoteMiss(HeadOperand& op, const absl::Status& miss) {
  if (!absl::IsNotFound(miss)) op.misses.emplace_back(miss.message());
}

// `inner`, reached through `outer`'s transposes and then `nodes`.
HeadOperand Behind(HeadOperand inner, const HeadOperand& outer, const std::vector<const Node*>& nodes) {
  inner.nodes.insert(inner.nodes.begin(), nodes.begin(), nodes.end());
  inner.nodes.insert(inner.nodes.begin(), outer.nodes.begin(), outer.nodes.end());
  inner.misses.insert(inner.misses.begin(), outer.misses.begin(), outer.misses.end());
  return inner;
}

}  // namespace

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
  Perm p = IdentityPerm(rank);
  if (rank >= 2) std::swap(p[rank - 1], p[rank - 2]);
  return p;
}

absl::StatusOr<HeadOperand> ResolveOperand(const Value* value, Perm perm, int rank, const ResolveOptions& options) {
  if (perm.empty()) perm = IdentityPerm(rank);
  // Every perm below indexes dims: it must be a permutation of the operand's rank.
  if (rank < 1 || static_cast<int>(perm.size()) != rank || !pattern::IsPermutation(perm))
    return absl::InvalidArgumentError(
        absl::StrCat("operand perm [", absl::StrJoin(perm, ", "), "] is not a permutation of rank ", rank));
  HeadOperand op;
  op.rank = rank;
  // Walk back through transposes, keeping the deepest value that already is the operand.
  const Value* v = value;
  while (true) {
    if (IsIdentityPerm(perm)) op.value = v;
    absl::StatusOr<TransposeStep> t = FindTranspose(v);
    if (!t.ok()) {
      NoteMiss(op, t.status());
      break;
    }
    std::optional<Perm> composed = ComposePerms(t->perm, perm);
    if (!composed) {
      op.misses.push_back(absl::StrCat("not a Transpose the walk can look through: ", t->node->Describe(),
                                       " permutes ", t->perm.size(), " dims, the operand has ", perm.size()));
      break;
    }
    perm = *std::move(composed);
    v = t->input;
    op.nodes.push_back(t->node);
  }
  op.base = v;
  op.perm = perm;

  if (op.value != nullptr && rank == 4) {
    if (options.look_through_repeat) {
      absl::StatusOr<HeadRepeat> repeat = FindGroupedRepeat(op.value);
      if (repeat.ok()) {
        ResolveOptions rest = options;
        rest.look_through_repeat = false;
        ASSIGN_OR_RETURN(HeadOperand inner, ResolveOperand(repeat->source, {}, rank, rest));
        inner.groups = repeat->groups;
        return Behind(std::move(inner), op, repeat->nodes);
      }
      NoteMiss(op, repeat.status());
    }
    if (options.look_through_past) {
      absl::StatusOr<PastConcat> cat = FindPastConcat(op.value);
      if (cat.ok()) {
        ResolveOptions rest = options;
        rest.look_through_past = false;
        rest.look_through_repeat = false;
        ASSIGN_OR_RETURN(HeadOperand inner, ResolveOperand(cat->fresh, {}, rank, rest));
        inner.past = cat->past;
        inner.present = op.value;
        std::vector<const Node*> replaced = cat->identities;
        replaced.push_back(cat->node);
        return Behind(std::move(inner), op, replaced);
      }
      NoteMiss(op, cat.status());
    }
  }

  if (rank == 4 && op.perm == Perm{0, 2, 1, 3}) {
    absl::StatusOr<HeadSplit> split = FindHeadSplit(op.base);
    if (split.ok()) {
      op.projection = split->projection;
      op.heads = split->heads;
      op.head_dim = split->head_dim;
      op.nodes.push_back(split->node);
    } else {
      NoteMiss(op, split.status());
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
    // Dims of Transpose(base, perm) read from base; perm is a permutation of rank.
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

}  // namespace attune::attention
