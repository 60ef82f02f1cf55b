// EmbedLayerNormalization (BERT's embeddings as ONNX Runtime's optimizer fuses
// them) as the Gathers, their sum and LayerNormalization, plus the mask index.
//
// Contract (ContribOperators.md, CPU kernel embed_layer_norm.cc):
//   inputs  input_ids [B,S] int32, segment_ids? [B,S], word_embedding [V,H],
//           position_embedding [P,H], segment_embedding? [G,H], gamma [H], beta [H],
//           mask? [B,S] int32, position_ids? ([B,S] or [1,S])
//   outputs output [B,S,H]; mask_index? [B] int32 = the count of mask entries equal
//           to 1 (zeros without a mask); embedding_sum? [B,S,H] (before the norm)
//   positions are 0..S-1 unless position_ids are given.
#include "absl/strings/str_cat.h"
#include "core/common/status_macros.h"
#include "engine/passes/contrib/lowerings.h"
#include "engine/passes/contrib/reduce_helpers.h"

namespace attune::contrib {
namespace {

Value* Gathered(Lowering& l, Value* table, Value* ids) {
  Attributes a;
  a.Set("axis", int64_t{0});
  return l.Add("Gather", {table, ids}, std::move(a), table->type());
}

// Rows 0..S-1 of the position table, S being input_ids' dim 1.
Value* LeadingPositions(Lowering& l, Value* table, Value* ids) {
  Value* shape = l.Add("Shape", {ids}, {}, ElementType::kInt64);
  Attributes slice_attrs;
  Value* length = l.Add("Slice", {shape, l.Int64s("one", {1}), l.Int64s("two", {2}), l.Int64s("zero_axis", {0})},
                        std::move(slice_attrs), ElementType::kInt64);
  return l.Add("Slice", {table, l.Int64s("zero", {0}), length, l.Int64s("zero_axis", {0})}, {}, table->type());
}

Value* MaskIndex(Lowering& l, Value* ids, Value* mask) {
  if (mask == nullptr) {
    Value* shape = l.Add("Shape", {ids}, {}, ElementType::kInt64);
    Value* batch = l.Add("Slice", {shape, l.Int64s("zero", {0}), l.Int64s("one", {1}), l.Int64s("zero_axis", {0})},
                         {}, ElementType::kInt64);
    Attributes a;
    a.Set("value", *Tensor::FromVector<int32_t>({1}, {0}));
    return l.Add("ConstantOfShape", {batch}, std::move(a), ElementType::kInt32);
  }
  Value* one = l.Constant("one_entry", Tensor::Scalar<int32_t>(1));
  Value* cast_mask = mask;
  if (mask->type() != ElementType::kInt32) {
    Attributes to;
    to.Set("to", int64_t{6});  // int32
    cast_mask = l.Add("Cast", {mask}, std::move(to), ElementType::kInt32);
  }
  Value* is_one = l.Add("Equal", {cast_mask, one}, {}, ElementType::kBool);
  Attributes to;
  to.Set("to", int64_t{6});
  Value* counted = l.Add("Cast", {is_one}, std::move(to), ElementType::kInt32);
  return Reduce(l, "ReduceSum", counted, {1}, false);
}

}  // namespace

absl::Status LowerEmbedLayerNorm(Lowering& l, PassContext& context) {
  RETURN_IF_ERROR(CheckArity(l, 0, 9, 3));
  RETURN_IF_ERROR(CheckKnownAttributes(l, {"epsilon", "mask_index_type"}));
  for (int i : {0, 2, 3, 5, 6})
    if (l.input(i) == nullptr) return l.Invalid(absl::StrCat("input ", i, " is required"));
  ASSIGN_OR_RETURN(const float epsilon, FloatAttr(l, "epsilon", 1e-12f));
  ASSIGN_OR_RETURN(const int64_t mask_index_type, IntAttr(l, "mask_index_type", 1));
  if (mask_index_type != 0 && mask_index_type != 1)
    return l.Invalid(absl::StrCat("attribute mask_index_type must be 0 or 1, got ", mask_index_type));
  Value* ids = l.input(0);
  Value* segment_ids = l.input(1);
  Value* segment_table = l.input(4);
  if ((segment_ids == nullptr) != (segment_table == nullptr))
    return l.Invalid("segment_ids and segment_embedding must be given together");
  for (int i : {2, 3, 4})
    if (l.input(i) != nullptr && Rank(l.input(i)) >= 0 && Rank(l.input(i)) != 2)
      return l.Invalid(absl::StrCat("input '", l.input(i)->name(), "' must be a 2-D table, its rank is ",
                                    Rank(l.input(i))));
  if (Rank(ids) >= 0 && Rank(ids) != 2)
    return l.Invalid(absl::StrCat("input_ids '", ids->name(), "' must be 2-D [batch, sequence], its rank is ", Rank(ids)));
  const ElementType type = l.input(2)->type();
  Value* sum = Gathered(l, l.input(2), ids);
  Value* positions = l.input(8) != nullptr ? Gathered(l, l.input(3), l.input(8)) : LeadingPositions(l, l.input(3), ids);
  sum = l.Add("Add", {sum, positions}, {}, type);
  if (segment_ids != nullptr) sum = l.Add("Add", {sum, Gathered(l, segment_table, segment_ids)}, {}, type);
  Attributes norm;
  norm.Set("axis", int64_t{-1});
  norm.Set("epsilon", epsilon);
  l.Forward(0, l.Add("LayerNormalization", {sum, l.input(5), l.input(6)}, std::move(norm), type));
  l.Forward(2, sum);
  if (l.wanted_output(1) != nullptr) {
    if (mask_index_type == 0) return l.Invalid("output mask_index is used but mask_index_type is 0 (no mask index)");
    l.Forward(1, MaskIndex(l, ids, l.input(7)));
  }
  return l.Finish(context, "LayerNormalization", absl::StrCat("epsilon=", epsilon));
}

}  // namespace attune::contrib
