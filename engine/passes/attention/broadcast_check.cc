#include "engine/passes/attention/broadcast_check.h"

#include "absl/strings/str_cat.h"
#include "engine/passes/attention/operand_forms.h"

namespace attune::attention {
namespace {

bool ProvablyEqual(const Dim& a, const Dim& b) { return !a.is_unknown() && a == b; }
bool KnownOne(const Dim& d) { return d.is_known() && d.value() == 1; }
bool KnownOther(const Dim& a, const Dim& b) { return a.is_known() && b.is_known() && a.value() != b.value(); }

std::string Quote(const Value* v) { return absl::StrCat("'", v->name(), "'"); }

}  // namespace

std::optional<std::string> CheckMatMulBroadcast(const Node& matmul, int rank, const char* left, const char* right) {
  const Value* a = matmul.input(0);
  const Value* b = matmul.input(1);
  if (a == nullptr || b == nullptr) return absl::StrCat(matmul.Describe(), " lacks an input");
  for (const Value* v : {a, b}) {
    if (RankOf(v) != rank)
      return absl::StrCat("cannot check how ", matmul.Describe(), " broadcasts: ", Quote(v), " has ",
                          RankOf(v) == 0 ? std::string("an unknown rank") : absl::StrCat("rank ", RankOf(v)),
                          ", the scores ", rank);
  }
  for (int i = 0; i + 2 < rank; ++i) {
    const Dim da = DimOf(a, i), db = DimOf(b, i);
    if (ProvablyEqual(da, db)) continue;
    const bool heads = i == 1;
    if (heads && KnownOne(db)) continue;  // one K/V head for every query head
    const std::string dims = absl::StrCat("dim ", i, " of ", left, " (", da.ToString(), ") and of ", right, " (",
                                          db.ToString(), ")");
    if (KnownOther(da, db) && !KnownOne(da) && !KnownOne(db))
      return absl::StrCat(matmul.Describe(), " cannot broadcast ", dims,
                          ": the unfused graph fails there, and a fusion must not turn that into a result");
    return absl::StrCat(dims, " of ", matmul.Describe(), " are not provably equal",
                        heads ? " (nor one K/V head broadcast)" : "", ": the fused op would not compute the same");
  }
  return std::nullopt;
}

std::optional<std::string> CheckMaskBroadcast(const Value* mask, const Value* scores) {
  const int mr = RankOf(mask), sr = RankOf(scores);
  if (mask == nullptr || mr == 0 || sr == 0) return std::nullopt;  // the proof or the fused op checks the shape
  if (mr > sr) return absl::StrCat("the mask ", Quote(mask), " has rank ", mr, ", more than the scores' ", sr);
  for (int i = 0; i < mr; ++i) {
    const Dim dm = DimOf(mask, mr - 1 - i), ds = DimOf(scores, sr - 1 - i);
    if (KnownOther(dm, ds) && !KnownOne(dm))
      return absl::StrCat("dim ", sr - 1 - i, " of the mask ", Quote(mask), " (", dm.ToString(),
                          ") does not broadcast into the scores' (", ds.ToString(), ")");
  }
  return std::nullopt;
}

}  // namespace attune::attention
