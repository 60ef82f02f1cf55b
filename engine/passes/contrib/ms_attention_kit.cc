#include "engine/passes/contrib/ms_attention_kit.h"

#include <limits>

#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"

namespace attune::contrib {
namespace {

std::string DimText(const Value* v, int axis) {
  const int64_t d = StaticDim(v, axis);
  return d >= 0 ? absl::StrCat(d) : "?";
}

std::string ShapeText(const Value* v) {
  std::string s = "[";
  for (int i = 0; i < Rank(v); ++i) absl::StrAppend(&s, i ? ", " : "", DimText(v, i));
  return s + "]";
}

// The shapes ONNX Runtime reads, checked where the graph shows them.
absl::Status CheckMaskShape(const Lowering& l, const char* name, const Value* mask, const Value* query) {
  const int rank = Rank(mask);
  const std::string where = absl::StrCat(name, " '", mask->name(), "'");
  if (mask->type() != ElementType::kUndefined && mask->type() != ElementType::kInt32)
    return l.Invalid(absl::StrCat(where, " must be int32, got ", ElementTypeName(mask->type())));
  if (rank < 1 || rank > 4)
    return l.Invalid(absl::StrCat(where, " has rank ", rank, ": the op takes [batch], [2 * batch], [batch, total], ",
                                  "[batch, sequence, total] or [batch, 1, max, max]"));
  const int64_t batch = StaticDim(query, 0), d0 = StaticDim(mask, 0);
  if (rank == 1 && batch > 0 && d0 >= 0 && d0 != batch && d0 != 2 * batch) {
    if (d0 == 3 * batch + 2)
      return l.Unsupported(absl::StrCat(where, " of shape [3 * batch + 2] is not supported (no CPU kernel defines it)"));
    return l.Invalid(absl::StrCat(where, " has shape ", ShapeText(mask), ": a 1-D mask is [batch = ", batch,
                                  "] or [2 * batch]"));
  }
  if (rank >= 2 && batch > 0 && d0 >= 0 && d0 != batch)
    return l.Invalid(absl::StrCat(where, " has shape ", ShapeText(mask), ", its first dim is not the batch ", batch));
  if (rank == 4 && StaticDim(mask, 1) >= 0 && StaticDim(mask, 1) != 1)
    return l.Invalid(absl::StrCat(where, " has shape ", ShapeText(mask), ": a 4-D mask is [batch, 1, max, max]"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<FusedMask> LowerMasks(Lowering& l, const char* mask_name, Value* mask, Value* bias, Value* query,
                                     Value* key, Value* past_key, float fill) {
  FusedMask out;
  if (bias != nullptr && Rank(bias) >= 0 && Rank(bias) != 4)
    return l.Invalid(absl::StrCat("attention_bias '", bias->name(), "' must be 4-D [batch or 1, heads or 1, ",
                                  "sequence, total], its rank is ", Rank(bias)));
  if (mask != nullptr) {
    if (Rank(mask) < 0)
      return absl::UnavailableError(absl::StrCat(l.Where(), ": the rank of ", mask_name, " '", mask->name(),
                                                 "' is not known"));
    RETURN_IF_ERROR(CheckMaskShape(l, mask_name, mask, query));
    const bool additive = Rank(mask) >= 3;
    Attributes a;
    a.Set("additive", int64_t{additive ? 1 : 0});
    if (additive) a.Set("fill", fill);
    std::vector<Value*> in = {mask, query, key};
    if (past_key != nullptr) in.push_back(l.Add("Shape", {past_key}, {}, ElementType::kInt64));
    Value* converted = l.Add("AttentionMaskIndex", in, std::move(a),
                             additive ? ElementType::kFloat32 : ElementType::kBool, "attune");
    if (additive) {
      out.explicit_mask = converted;
      out.kind = Rank(mask) == 3 ? "mask[B,S,T]" : "mask[B,1,M,M]";
    } else {
      out.key_padding = converted;
      out.kind = Rank(mask) == 1 ? "padding(mask_index[B] or [2B])" : "padding(mask[B,T])";
    }
  }
  if (bias != nullptr) {
    if (out.explicit_mask != nullptr) {
      out.explicit_mask = l.Add("Add", {bias, out.explicit_mask}, {}, ElementType::kFloat32);
    } else {
      out.explicit_mask = bias;
      out.bias_into_mask = out.key_padding != nullptr;
    }
  }
  return out;
}

Attributes FusedAttributes(int64_t heads, float scale, bool causal, const FusedMask& mask, float fill) {
  Attributes m;
  m.Set(mha::kNumHeads, heads);
  if (scale != 0.0f) m.Set(mha::kScale, scale);
  if (causal) m.Set(mha::kCausal, int64_t{1});
  if (mask.key_padding != nullptr) {
    // A row whose every key is hidden is then softmax over these scores, as on ONNX Runtime.
    const float lowest = std::numeric_limits<float>::lowest();
    m.Set(mha::kMaskedRows, std::string(mha::ToString(mha::MaskedRows::kFills)));
    m.Set(mha::kHiddenFills, std::vector<float>{lowest, fill, lowest});
    m.Set(mha::kHiddenFillsAddScores, std::vector<int64_t>{1, 1, 1});
  }
  if (mask.bias_into_mask) m.Set(mha::kPositionBias, mha::kBiasIntoMask);
  return m;
}

Value* Unsqueezed(Lowering& l, Value* x, int64_t axis) {
  if (l.graph().OpsetFor("") >= 13) return l.Add("Unsqueeze", {x, l.Int64s("axes", {axis})}, {}, x->type());
  Attributes a;
  a.Set("axes", std::vector<int64_t>{axis});
  return l.Add("Unsqueeze", {x}, std::move(a), x->type());
}

std::vector<Value*> SplitInto(Lowering& l, Value* x, int64_t axis, const std::vector<int64_t>& sizes) {
  Attributes a;
  a.Set("axis", axis);
  std::vector<Value*> in = {x};
  if (l.graph().OpsetFor("") >= 13) {
    in.push_back(l.Int64s("split", sizes));
  } else {
    a.Set("split", sizes);
  }
  return l.AddMulti("Split", in, static_cast<int>(sizes.size()), std::move(a), x->type());
}

Value* Reshaped(Lowering& l, Value* x, const std::vector<int64_t>& shape) {
  return l.Add("Reshape", {x, l.Int64s("shape", shape)}, {}, x->type());
}

Value* Transposed(Lowering& l, Value* x, const std::vector<int64_t>& perm) {
  Attributes a;
  a.Set("perm", perm);
  return l.Add("Transpose", {x}, std::move(a), x->type());
}

absl::StatusOr<int64_t> HeadsAttr(const Lowering& l) {
  ASSIGN_OR_RETURN(const int64_t heads, IntAttr(l, "num_heads", 0));
  if (heads <= 0) return l.Invalid(absl::StrCat("num_heads must be > 0, got ", heads));
  return heads;
}

}  // namespace attune::contrib
