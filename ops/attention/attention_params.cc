#include "ops/attention/attention_params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/common/escape.h"
#include "core/common/status_macros.h"
#include "core/common/strings.h"

namespace attune::attention {
namespace {

// A misspelt attribute must not silently fall back to its default.
absl::Status CheckKnownAttributes(const KernelInfo& info, const char* op, absl::Span<const std::string_view> known) {
  for (const auto& [name, value] : info.attrs().all()) {
    bool found = false;
    for (std::string_view k : known) found = found || k == name;
    if (!found) return absl::UnimplementedError(absl::StrCat(op, ": unsupported attribute ", QuoteName(name)));
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> PositiveOrAbsent(const Attributes& attrs, const char* op, const char* name) {
  ASSIGN_OR_RETURN(int64_t v, attrs.GetInt(name, 0));
  if (attrs.Has(name) && v <= 0) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": attribute ", name, " must be > 0 (got ", v, ")"));
  }
  return v;
}

absl::StatusOr<bool> Flag(const Attributes& attrs, const char* op, const char* name) {
  ASSIGN_OR_RETURN(int64_t v, attrs.GetInt(name, 0));
  if (v != 0 && v != 1) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": attribute ", name, " must be 0 or 1 (got ", v, ")"));
  }
  return v == 1;
}

// The attributes both ops have under the same names (MultiHeadAttention's
// were chosen to match ONNX Attention's), but for the query head count.
absl::Status ParseCommon(const Attributes& attrs, const char* q_heads_name, AttentionParams& p) {
  ASSIGN_OR_RETURN(p.q_heads, PositiveOrAbsent(attrs, p.op_name, q_heads_name));
  ASSIGN_OR_RETURN(p.kv_heads, PositiveOrAbsent(attrs, p.op_name, mha::kKvNumHeads));
  if (attrs.Has(mha::kScale)) {
    ASSIGN_OR_RETURN(float scale, attrs.GetFloat(mha::kScale));
    if (!std::isfinite(scale)) {
      return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": attribute scale must be finite"));
    }
    p.scale = scale;
  }
  ASSIGN_OR_RETURN(p.softcap, attrs.GetFloat(mha::kSoftcap, 0.0f));
  if (!std::isfinite(p.softcap) || p.softcap < 0.0f) {
    return absl::InvalidArgumentError(
        absl::StrCat(p.op_name, ": attribute softcap must be finite and >= 0 (got ", p.softcap, ")"));
  }
  return absl::OkStatus();
}

// masked_rows: what a query row whose every key is hidden outputs, so that
// the fused op gives what the subgraph it replaces gives there.
absl::StatusOr<MaskedRows> ParseMaskedRows(const Attributes& attrs, const char* op) {
  ASSIGN_OR_RETURN(std::string v, attrs.GetString(mha::kMaskedRows, std::string(ToString(MaskedRows::kZeros))));
  auto rows = mha::ParseMaskedRows(v);
  if (!rows.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": attribute ", rows.status().message()));
  return rows;
}

// hidden_fills: [causal only, padding only, both], the scores of hidden keys.
absl::StatusOr<HiddenFills> ParseHiddenFills(const Attributes& attrs, const char* op) {
  HiddenFills f;
  if (!attrs.Has(mha::kHiddenFills)) return f;
  ASSIGN_OR_RETURN(std::vector<float> v, attrs.GetFloats(mha::kHiddenFills));
  if (v.size() != 3)
    return absl::InvalidArgumentError(absl::StrCat(op, ": attribute hidden_fills must hold 3 numbers (got ", v.size(), ")"));
  for (float x : v) {
    if (std::isnan(x) || x == std::numeric_limits<float>::infinity())
      return absl::InvalidArgumentError(absl::StrCat(op, ": attribute hidden_fills must be finite or -inf (got ", x, ")"));
  }
  f.causal = v[0];
  f.padding = v[1];
  f.both = v[2];
  if (!attrs.Has(mha::kHiddenFillsAddScores)) return f;
  ASSIGN_OR_RETURN(std::vector<int64_t> adds, attrs.GetInts(mha::kHiddenFillsAddScores));
  if (adds.size() != 3 || std::any_of(adds.begin(), adds.end(), [](int64_t x) { return x != 0 && x != 1; }))
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": attribute hidden_fills_add_scores must hold 3 flags, each 0 or 1"));
  f.causal_adds_score = adds[0] == 1;
  f.padding_adds_score = adds[1] == 1;
  f.both_adds_score = adds[2] == 1;
  return f;
}

// score_rounding, score_divisor, score_floors: how the subgraph's 16-bit
// steps compute a row whose every key is hidden (HiddenFills::rounding).
absl::Status ParseHalfScores(const Attributes& attrs, const char* op, HiddenFills& f) {
  ASSIGN_OR_RETURN(std::string rounding, attrs.GetString(mha::kScoreRounding, ""));
  if (!rounding.empty() && rounding != "float16" && rounding != "bfloat16")
    return absl::InvalidArgumentError(absl::StrCat(
        op, ": attribute score_rounding must be \"float16\" or \"bfloat16\" (got \"", rounding, "\")"));
  f.rounding = rounding.empty()       ? ElementType::kFloat32
               : rounding == "float16" ? ElementType::kFloat16
                                       : ElementType::kBFloat16;
  if (!f.half() && (attrs.Has(mha::kScoreDivisor) || attrs.Has(mha::kScoreFloors)))
    return absl::InvalidArgumentError(absl::StrCat(op, ": attributes score_divisor and score_floors need score_rounding"));
  ASSIGN_OR_RETURN(f.divisor, attrs.GetFloat(mha::kScoreDivisor, 0.0f));
  if (attrs.Has(mha::kScoreDivisor) && !(f.divisor > 0.0f && std::isfinite(f.divisor)))
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": attribute score_divisor must be finite and > 0 (got ", f.divisor, ")"));
  if (!attrs.Has(mha::kScoreFloors)) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<float> floors, attrs.GetFloats(mha::kScoreFloors));
  if (floors.size() != 4 || std::any_of(floors.begin(), floors.end(), [](float x) {
        return std::isnan(x) || x == std::numeric_limits<float>::infinity();
      }))
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": attribute score_floors must hold 4 numbers, each finite or -inf"));
  std::copy(floors.begin(), floors.end(), f.floors.begin());
  return absl::OkStatus();
}

// hidden_nonfinite: [structural, bias], each 0 or 1.
absl::StatusOr<HiddenNonFinite> ParseHiddenNonFinite(const Attributes& attrs, const char* op) {
  HiddenNonFinite h;
  if (!attrs.Has(mha::kHiddenNonFinite)) return h;
  ASSIGN_OR_RETURN(std::vector<int64_t> v, attrs.GetInts(mha::kHiddenNonFinite));
  if (v.size() != 2 || (v[0] != 0 && v[0] != 1) || (v[1] != 0 && v[1] != 1))
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": attribute hidden_nonfinite must hold 2 flags, 0 or 1 (structural, bias)"));
  h.structural = v[0] == 1;
  h.bias = v[1] == 1;
  return h;
}

// A string attribute naming one value of an enum, parsed by `parse`; the
// error is one line naming the op and the attribute.
template <typename Enum, typename Parse>
absl::StatusOr<Enum> ParseEnumAttribute(const Attributes& attrs, const char* op, const char* name, Enum fallback,
                                        Parse parse) {
  ASSIGN_OR_RETURN(std::string v, attrs.GetString(name, std::string(ToString(fallback))));
  absl::StatusOr<Enum> value = parse(v);
  if (!value.ok()) return absl::InvalidArgumentError(absl::StrCat(op, ": attribute ", value.status().message()));
  return value;
}

absl::StatusOr<KeyPaddingValues> ParseKeyPaddingValues(const Attributes& attrs, const char* op) {
  return ParseEnumAttribute(attrs, op, mha::kKeyPadding, KeyPaddingValues::kBinary,
                            [](const std::string& v) { return mha::ParseKeyPaddingValues(v); });
}

absl::StatusOr<KeyPaddingLength> ParseKeyPaddingLength(const Attributes& attrs, const char* op) {
  return ParseEnumAttribute(attrs, op, mha::kKeyPaddingLength, KeyPaddingLength::kKeys,
                            [](const std::string& v) { return mha::ParseKeyPaddingLength(v); });
}

absl::Status CheckArity(const KernelInfo& info, const char* op, int max_inputs, int max_outputs) {
  if (info.num_inputs() < 3) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": needs inputs Q, K and V (got ", info.num_inputs(), ")"));
  }
  for (int i = 0; i < 3; ++i) {
    if (!info.input_present[i]) {
      return absl::InvalidArgumentError(absl::StrCat(op, ": input ", i, " (Q, K, V) may not be omitted"));
    }
  }
  if (info.num_inputs() > max_inputs) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": at most ", max_inputs, " inputs at this version (got ", info.num_inputs(), ")"));
  }
  if (info.num_outputs > max_outputs) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": at most ", max_outputs, " outputs (got ", info.num_outputs, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<AttentionParams> ParseMultiHeadAttentionParams(const KernelInfo& info) {
  AttentionParams p;
  p.op_name = mha::kOpType;
  const Attributes& attrs = info.attrs();
  RETURN_IF_ERROR(CheckKnownAttributes(info, p.op_name, mha::kAttributes));
  RETURN_IF_ERROR(CheckArity(info, p.op_name, mha::kNumInputs, mha::kNumOutputs));
  RETURN_IF_ERROR(ParseCommon(attrs, mha::kNumHeads, p));
  ASSIGN_OR_RETURN(p.causal, Flag(attrs, p.op_name, mha::kCausal));
  ASSIGN_OR_RETURN(p.window, attrs.GetInt(mha::kWindow, 0));
  if (p.window < 0) {
    return absl::InvalidArgumentError(absl::StrCat(p.op_name, ": attribute window must be >= 0 (got ", p.window, ")"));
  }
  ASSIGN_OR_RETURN(p.masked_rows, ParseMaskedRows(attrs, p.op_name));
  ASSIGN_OR_RETURN(p.hidden_fills, ParseHiddenFills(attrs, p.op_name));
  RETURN_IF_ERROR(ParseHalfScores(attrs, p.op_name, p.hidden_fills));
  ASSIGN_OR_RETURN(p.key_padding_values, ParseKeyPaddingValues(attrs, p.op_name));
  ASSIGN_OR_RETURN(p.key_padding_length, ParseKeyPaddingLength(attrs, p.op_name));
  ASSIGN_OR_RETURN(p.hidden_nonfinite, ParseHiddenNonFinite(attrs, p.op_name));
  ASSIGN_OR_RETURN(p.nan_rows_zeroed, Flag(attrs, p.op_name, mha::kNanGuard));
  ASSIGN_OR_RETURN(p.score_limit, attrs.GetFloat(mha::kScoreLimit, std::numeric_limits<float>::infinity()));
  if (!(p.score_limit > 0.0f)) {
    return absl::InvalidArgumentError(
        absl::StrCat(p.op_name, ": attribute score_limit must be > 0 (got ", p.score_limit, ")"));
  }
  ASSIGN_OR_RETURN(const int64_t position_bias, attrs.GetInt(mha::kPositionBias, 0));
  if (position_bias < 0 || position_bias > mha::kBiasIntoMask)
    return absl::InvalidArgumentError(
        absl::StrCat(p.op_name, ": attribute position_bias must be 0, 1 or 2 (got ", position_bias, ")"));
  p.position_bias = position_bias != 0;
  p.bias_into_mask = position_bias == mha::kBiasIntoMask;
  ASSIGN_OR_RETURN(p.max_kv_len, attrs.GetInt(mha::kMaxKvLen, 0));
  if (attrs.Has(mha::kMaxKvLen) && p.max_kv_len <= 0)
    return absl::InvalidArgumentError(
        absl::StrCat(p.op_name, ": attribute max_kv_len must be > 0 (got ", p.max_kv_len, ")"));
  p.alignment = CausalAlignment::kBottomRight;
  p.short_mask_keys = ShortMaskKeys::kBroadcast;
  // Output 3 holds the probabilities (mha::kOutputProbabilities).
  p.qk_output_mode = QkOutputMode::kSoftmax;
  return p;
}

absl::StatusOr<AttentionParams> ParseOnnxAttentionParams(const KernelInfo& info) {
  AttentionParams p;
  p.op_name = "Attention";
  const Attributes& attrs = info.attrs();
  static constexpr std::string_view kOnnxAttributes[] = {
      "is_causal", "q_num_heads", "kv_num_heads", "scale", "softcap", "qk_matmul_output_mode", "softmax_precision"};
  RETURN_IF_ERROR(CheckKnownAttributes(info, p.op_name, kOnnxAttributes));
  p.accepts_nonpad_kv_seqlen = info.opset >= 24;
  RETURN_IF_ERROR(CheckArity(info, p.op_name, p.accepts_nonpad_kv_seqlen ? 7 : 6, /*max_outputs=*/4));
  RETURN_IF_ERROR(ParseCommon(attrs, "q_num_heads", p));
  ASSIGN_OR_RETURN(p.causal, Flag(attrs, p.op_name, "is_causal"));
  ASSIGN_OR_RETURN(int64_t mode, attrs.GetInt("qk_matmul_output_mode", 0));
  if (mode < 0 || mode > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat(p.op_name, ": attribute qk_matmul_output_mode must be 0, 1, 2 or 3 (got ", mode, ")"));
  }
  p.qk_output_mode = static_cast<QkOutputMode>(mode);
  // softmax_precision only asks for at least the input precision; every path
  // here computes the softmax in float or double, so it needs no handling.
  ASSIGN_OR_RETURN(int64_t precision, attrs.GetInt("softmax_precision", 1));
  (void)precision;
  p.alignment = CausalAlignment::kOnnx;
  p.short_mask_keys = ShortMaskKeys::kHide;
  return p;
}

}  // namespace attune::attention
