// The attention subgraphs exporters write, as patterns: one pattern per
// variant, each built from the same pieces by parameters (where the scale
// sits, how the mask is applied, softcap or not), never written out by hand.
#pragma once

#include <string>
#include <vector>

#include "engine/pattern/pattern.h"

namespace attune::attention {

/// Where the 1/√D (or other) factor is applied.
enum class ScalePlace {
  kNone,         // not at all (scale 1)
  kScores,       // Div or Mul on Q·Kᵀ
  kQuery,        // Div or Mul on Q before the MatMul
  kQueryAndKey,  // a factor on Q and one on K (or Kᵀ), e.g. √(1/√D) each
};

/// How the mask enters the scores.
enum class MaskForm {
  kNone,
  kWhere,  // Where(cond, fill, scores) or Where(cond, scores, fill)
  kAdd,    // Add(scores, mask)
  /// Two or three steps, each a Where, Add, Sub or Max with the scores in
  /// one operand (GPT-2: Where(causal, s, min) then + padding); what they
  /// compute together is proven by evaluating them (mask_chain_proof.h).
  kChain2,
  kChain3,
};

struct AttentionVariant {
  ScalePlace scale = ScalePlace::kScores;
  MaskForm mask = MaskForm::kNone;
  bool mask_before_scale = false;  // only with ScalePlace::kScores and a mask
  bool softcap = false;            // c·tanh(scores / c) after the scale, before the mask
  /// "attention[scale=scores, mask=where]" for reports.
  std::string Name() const;
};

/// Every variant, the common ones first.
std::vector<AttentionVariant> AllAttentionVariants();

/// The pattern of one variant, rooted at the output MatMul(probabilities, V).
pattern::Pattern AttentionPattern(const AttentionVariant& variant);

/// A cheap pattern for candidates: MatMul(Softmax(...) seen through the
/// wrappers attention puts after it, any V). Captures captures::kSoftmax.
pattern::Pattern AttentionCandidatePattern();

/// Capture names shared by the patterns and the checks.
namespace captures {
inline constexpr char kOutputMatMul[] = "pv";    // node: probabilities · V
inline constexpr char kV[] = "v";
inline constexpr char kSoftmax[] = "softmax";    // node
inline constexpr char kScores[] = "scores";      // node: Q · Kᵀ
inline constexpr char kQ[] = "q";
inline constexpr char kKt[] = "kt";              // Kᵀ as the score MatMul reads it (scale removed)
inline constexpr char kKtBase[] = "kt_base";     // Kᵀ = Transpose(kt_base · k_scale) ...
inline constexpr char kKtTranspose[] = "kt_transpose";  // ... through this node
inline constexpr char kScale[] = "scale";        // prefix: scale_div / scale_mul on the scores
/// prefix: a second factor on the scores before `scale` (Megatron's query-key
/// layer scaling: baddbmm's alpha 1/(√D·coeff), then · coeff after the float cast)
inline constexpr char kInnerScale[] = "inner_scale";
inline constexpr char kQScale[] = "q_scale";     // prefix: on Q
inline constexpr char kKScale[] = "k_scale";     // prefix: on K
inline constexpr char kMaskNode[] = "mask_node";    // the (last) mask step
inline constexpr char kMaskView[] = "mask_view";    // node: a Reshape of the masked scores to their own shape
inline constexpr char kNanGuarded[] = "nan_guarded";  // value: p in a Where(IsNaN(p), 0, p) guard
inline constexpr char kMaskChainIn[] = "mask_in";  // value: the scores the first mask step reads
inline constexpr char kMaskBlocked[] = "mask_blocked";  // Where(cond, fill, scores): cond
inline constexpr char kMaskKeep[] = "mask_keep";        // Where(cond, scores, fill): cond
inline constexpr char kMaskFill[] = "mask_fill";
inline constexpr char kMaskAdd[] = "mask_add";
/// An attention sink (sink_stage.cc): Concat(masked scores, a column) along
/// the keys, optionally minus its row max, softmaxed, then the column sliced off.
inline constexpr char kSinkConcat[] = "sink_concat";      // node: Concat(scores, column)
inline constexpr char kSinkColumn[] = "sink_column";      // value: the column concatenated after the keys
inline constexpr char kSinkLogits[] = "sink_logits";      // value: the Concat's output
inline constexpr char kSinkRowMax[] = "sink_row_max";     // node: ReduceMax of the logits
inline constexpr char kSinkSlice[] = "sink_slice";        // node: Slice of the probabilities
inline constexpr char kSoftcapDiv[] = "softcap_div";
inline constexpr char kSoftcapMul[] = "softcap_mul";
}  // namespace captures

}  // namespace attune::attention
