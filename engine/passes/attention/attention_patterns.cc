#include "engine/passes/attention/attention_patterns.h"

#include "absl/strings/str_cat.h"
#include "engine/pattern/predicates.h"

namespace attune::attention {
namespace {

using pattern::Any;
using pattern::Capture;
using pattern::Op;
using pattern::OneOf;
using pattern::Pattern;

namespace c = captures;

bool IsFloatType(ElementType t) {
  return t == ElementType::kFloat32 || t == ElementType::kFloat16 || t == ElementType::kBFloat16 ||
         t == ElementType::kFloat64;
}

// Identity, inference Dropout and no-op Casts may sit between any two steps.
Pattern Tidy(Pattern p) { return pattern::Wrapped(std::move(p), pattern::IdentityWrappers()); }

// A Cast between float types: fp16 exports compute the softmax in float32.
// Which of them a fusion may absorb (those that lose nothing of Q's type) is
// the rule's check (attention_rule.cc), so that a rounding Cast is a
// rejection with its reason rather than a pattern that does not match.
Pattern FloatCast(Pattern p) {
  return Op("Cast")
      .Check([](const Node& n, const pattern::Match&) -> std::optional<std::string> {
        auto to = n.attributes().GetInt("to");
        const Value* in = n.input(0);
        if (!to.ok() || in == nullptr || !IsFloatType(in->type()) || !IsFloatType(static_cast<ElementType>(*to)))
          return std::string("not a cast between float types");
        return std::nullopt;
      })
      .Inputs({std::move(p)});
}

// x / c or x · c (either order); the factor is captured as <prefix>_div or <prefix>_mul.
Pattern Scaled(Pattern x, const std::string& prefix) {
  return OneOf({Op("Div").Inputs({x, Capture(prefix + "_div")}),
                Op("Mul").Commutative().Inputs({x, Capture(prefix + "_mul")})});
}

// One step of a mask chain: the scores in one operand, anything in the others.
Pattern ChainStep(Pattern x, const std::string& node) {
  return OneOf({Op("Where").CaptureNode(node).Inputs({Any(), Any(), x}),
                Op("Where").CaptureNode(node).Inputs({Any(), x, Any()}),
                Op("Add").CaptureNode(node).Commutative().Inputs({x, Any()}),
                Op("Sub").CaptureNode(node).Inputs({x, Any()}),
                Op("Max").CaptureNode(node).Commutative().Inputs({x, Any()})});
}

Pattern MaskStage(MaskForm form, Pattern x) {
  x = Capture(c::kMaskChainIn, std::move(x));
  if (form == MaskForm::kChain2 || form == MaskForm::kChain3) {
    Pattern s = Tidy(ChainStep(x, "mask_step_0"));
    if (form == MaskForm::kChain3) s = Tidy(ChainStep(s, "mask_step_1"));
    return ChainStep(s, c::kMaskNode);
  }
  if (form == MaskForm::kWhere) {
    return OneOf({Op("Where").CaptureNode(c::kMaskNode).Inputs({Capture(c::kMaskBlocked), Capture(c::kMaskFill), x}),
                  Op("Where").CaptureNode(c::kMaskNode).Inputs({Capture(c::kMaskKeep), x, Capture(c::kMaskFill)})});
  }
  return Op("Add").CaptureNode(c::kMaskNode).Commutative().Inputs({x, Capture(c::kMaskAdd)});
}

// A Reshape of the masked scores back to the scores' own shape: what
// unmerge_heads leaves of a head merge whose input's key length is not proven
// (a padding mask of another length broadcast into the scores). The rule
// checks the shapes; the mask proof evaluates it with the mask steps.
Pattern MaskView(Pattern masked) {
  return Op("Reshape").CaptureNode(c::kMaskView).Inputs({std::move(masked), Any()});
}

Pattern SoftcapStage(Pattern x) {
  Pattern divided = Tidy(Op("Div").Inputs({std::move(x), pattern::ScalarConstant(c::kSoftcapDiv)}));
  return Op("Mul").Commutative().Inputs({Op("Tanh").Inputs({divided}), pattern::ScalarConstant(c::kSoftcapMul)});
}

// Where(IsNaN(p), 0, p): guards fully masked rows after the softmax.
Pattern NanGuard(Pattern p) {
  auto zero = [](double v) -> std::optional<std::string> {
    if (v == 0.0) return std::nullopt;
    return std::string("the guard fill is not 0");
  };
  return Op("Where").Inputs({Op("IsNaN").Inputs({Capture(c::kNanGuarded)}), pattern::ScalarConstant("nan_fill", zero),
                             Capture(c::kNanGuarded, std::move(p))});
}

// Up to two float Casts in a row: softmax(x, dtype=float32).to(float16) is
// exported by torch 1.13 as Softmax, Cast(float32), Cast(float16).
Pattern FloatCasts(Pattern p) {
  p = Tidy(pattern::Optional(std::move(p), FloatCast));
  return Tidy(pattern::Optional(std::move(p), FloatCast));
}

// An attention sink's logits: Concat(scores, column) on the key axis,
// optionally minus their row max (gpt-oss subtracts it before the softmax).
// Which column and axis, and that the max is the row's, is the sink stage's
// check (sink_stage.cc), so that a wrong one is a reason, not a silent miss.
Pattern SinkLogits(Pattern scores) {
  Pattern logits = Capture(c::kSinkLogits, Op("Concat").CaptureNode(c::kSinkConcat)
                                               .Inputs({std::move(scores), Capture(c::kSinkColumn)}));
  Pattern row_max = Op("ReduceMax").CaptureNode(c::kSinkRowMax).IgnoreExtraInputs().Inputs({Capture(c::kSinkLogits)});
  return OneOf({Op("Sub").Inputs({logits, row_max}), logits});
}

// The probabilities with the sink's column sliced off (the stage checks which).
Pattern SinkDropped(Pattern probabilities) {
  return Tidy(Op("Slice").CaptureNode(c::kSinkSlice).IgnoreExtraInputs().Inputs({std::move(probabilities)}));
}

// What the output MatMul reads: the softmax seen through dropout, an attention
// sink's Slice, casts and a NaN guard.
Pattern Probabilities(Pattern softmax) {
  Pattern p = pattern::Optional(Tidy(std::move(softmax)), SinkDropped);
  p = pattern::Optional(p, NanGuard);
  return FloatCasts(p);
}

const char* ScaleName(ScalePlace s) {
  switch (s) {
    case ScalePlace::kNone: return "none";
    case ScalePlace::kScores: return "scores";
    case ScalePlace::kQuery: return "query";
    case ScalePlace::kQueryAndKey: return "query-and-key";
  }
  return "?";
}

const char* MaskName(MaskForm m) {
  switch (m) {
    case MaskForm::kNone: return "none";
    case MaskForm::kWhere: return "where";
    case MaskForm::kAdd: return "add";
    case MaskForm::kChain2: return "chain2";
    case MaskForm::kChain3: return "chain3";
  }
  return "?";
}

}  // namespace

std::string AttentionVariant::Name() const {
  return absl::StrCat("attention[scale=", ScaleName(scale), ", mask=", MaskName(mask),
                      mask_before_scale ? "-before-scale" : "", softcap ? ", softcap" : "", "]");
}

std::vector<AttentionVariant> AllAttentionVariants() {
  std::vector<AttentionVariant> out;
  // The scale on Q and K before the one on Q alone: the longer match explains more.
  const ScalePlace scales[] = {ScalePlace::kScores, ScalePlace::kQueryAndKey, ScalePlace::kQuery, ScalePlace::kNone};
  const MaskForm masks[] = {MaskForm::kWhere, MaskForm::kAdd, MaskForm::kChain2, MaskForm::kChain3, MaskForm::kNone};
  for (bool softcap : {false, true}) {
    for (ScalePlace s : scales) {
      for (MaskForm m : masks) {
        out.push_back({s, m, false, softcap});
        const bool chain = m == MaskForm::kChain2 || m == MaskForm::kChain3;
        if (s == ScalePlace::kScores && m != MaskForm::kNone && !chain && !softcap) out.push_back({s, m, true, softcap});
      }
    }
  }
  return out;
}

Pattern AttentionPattern(const AttentionVariant& v) {
  Pattern q = Capture(c::kQ);
  if (v.scale == ScalePlace::kQuery || v.scale == ScalePlace::kQueryAndKey) q = Scaled(Tidy(q), c::kQScale);
  Pattern kt = Capture(c::kKt);
  if (v.scale == ScalePlace::kQueryAndKey) {
    kt = OneOf({Scaled(Tidy(kt), c::kKScale),
                Op("Transpose").CaptureNode(c::kKtTranspose).Inputs({Tidy(Scaled(Tidy(Capture(c::kKtBase)), c::kKScale))})});
  }
  // float16 exports may compute the scale in float32 between two Casts
  // (torch 1.13 writes GPT-2's w / torch.full([], √D, dtype) so).
  Pattern s = FloatCasts(Op("MatMul").CaptureNode(c::kScores).Inputs({Tidy(q), Tidy(kt)}));
  if (v.scale == ScalePlace::kScores && !v.mask_before_scale)
    s = pattern::Optional(s, [](Pattern x) { return FloatCasts(Scaled(std::move(x), c::kInnerScale)); });
  if (v.mask_before_scale) s = Tidy(MaskStage(v.mask, s));
  if (v.scale == ScalePlace::kScores) s = FloatCasts(Scaled(s, c::kScale));
  if (v.softcap) s = Tidy(SoftcapStage(s));
  if (!v.mask_before_scale && v.mask != MaskForm::kNone) s = Tidy(pattern::Optional(Tidy(MaskStage(v.mask, s)), MaskView));
  Pattern softmax_input = pattern::Optional(FloatCasts(s), SinkLogits);
  Pattern softmax = Op("Softmax").CaptureNode(c::kSoftmax).Inputs({softmax_input});
  return Op("MatMul").CaptureNode(c::kOutputMatMul).Inputs({Probabilities(softmax), Capture(c::kV)});
}

Pattern AttentionCandidatePattern() {
  return Op("MatMul").Inputs({Probabilities(Op("Softmax").CaptureNode(c::kSoftmax)), Any()});
}

}  // namespace attune::attention
