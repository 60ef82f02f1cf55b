#include "core/schema/multi_head_attention.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"
#include "core/ir/graph.h"

namespace attune::mha {
namespace {

template <class E>
struct Named {
  E value;
  const char* name;
};

constexpr Named<MaskedRows> kMaskedRowsNames[] = {
    {MaskedRows::kZeros, "zeros"},
    {MaskedRows::kNaN, "nan"},
    {MaskedRows::kUniform, "uniform"},
    {MaskedRows::kFills, "fills"},
};

constexpr Named<KeyPaddingValues> kKeyPaddingNames[] = {
    {KeyPaddingValues::kBinary, "binary"},
    {KeyPaddingValues::kNonzero, "nonzero"},
};

constexpr Named<KeyPaddingLength> kKeyPaddingLengthNames[] = {
    {KeyPaddingLength::kKeys, "keys"},
    {KeyPaddingLength::kBroadcast, "broadcast"},
    {KeyPaddingLength::kBroadcastViewed, "broadcast_viewed"},
};

constexpr Named<MaskKind> kMaskKindNames[] = {
    {MaskKind::kNone, "none"},
    {MaskKind::kCausal, "causal"},
    {MaskKind::kWindow, "window"},
    {MaskKind::kExplicit, "explicit"},
    {MaskKind::kPadding, "padding"},
    {MaskKind::kCausalPadding, "causal+padding"},
    {MaskKind::kWindowPadding, "window+padding"},
};

template <class E, size_t N>
const char* NameOf(const Named<E> (&table)[N], E value) {
  for (const Named<E>& n : table)
    if (n.value == value) return n.name;
  return "?";  // not a value of the enum
}

// `what` names the thing parsed in the message: "masked_rows must be "zeros", ... (got "x")".
template <class E, size_t N>
absl::StatusOr<E> ValueOf(const Named<E> (&table)[N], std::string_view what, std::string_view name) {
  std::string allowed;
  for (size_t i = 0; i < N; ++i) {
    if (name == table[i].name) return table[i].value;
    absl::StrAppend(&allowed, i == 0 ? "" : i + 1 == N ? " or " : ", ", "\"", table[i].name, "\"");
  }
  return absl::InvalidArgumentError(absl::StrCat(Sv(what), " must be ", allowed, " (got \"", Sv(name), "\")"));
}

}  // namespace

const char* ToString(MaskedRows rows) { return NameOf(kMaskedRowsNames, rows); }
const char* ToString(KeyPaddingValues values) { return NameOf(kKeyPaddingNames, values); }
const char* ToString(KeyPaddingLength length) { return NameOf(kKeyPaddingLengthNames, length); }
const char* ToString(MaskKind kind) { return NameOf(kMaskKindNames, kind); }

absl::StatusOr<MaskedRows> ParseMaskedRows(std::string_view name) {
  return ValueOf(kMaskedRowsNames, kMaskedRows, name);
}
absl::StatusOr<KeyPaddingValues> ParseKeyPaddingValues(std::string_view name) {
  return ValueOf(kKeyPaddingNames, kKeyPadding, name);
}
absl::StatusOr<KeyPaddingLength> ParseKeyPaddingLength(std::string_view name) {
  return ValueOf(kKeyPaddingLengthNames, kKeyPaddingLength, name);
}
std::string ToStringWithBias(MaskKind kind) {
  if (kind == MaskKind::kNone) return "bias";
  return absl::StrCat(ToString(kind), kBiasSuffix);
}

absl::StatusOr<MaskKind> ParseMaskKind(std::string_view name) {
  if (name == "bias") return MaskKind::kNone;
  const std::string_view suffix = kBiasSuffix;
  if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
    absl::StatusOr<MaskKind> kind = ValueOf(kMaskKindNames, "mask kind", name.substr(0, name.size() - suffix.size()));
    if (kind.ok() && *kind != MaskKind::kExplicit && *kind != MaskKind::kNone) return kind;
  }
  return ValueOf(kMaskKindNames, "mask kind", name);
}

MaskKind WithKeyPadding(MaskKind kind) {
  switch (kind) {
    case MaskKind::kNone: return MaskKind::kPadding;
    case MaskKind::kCausal: return MaskKind::kCausalPadding;
    case MaskKind::kWindow: return MaskKind::kWindowPadding;
    default: return kind;
  }
}

MaskKind WithoutKeyPadding(MaskKind kind) {
  switch (kind) {
    case MaskKind::kPadding: return MaskKind::kNone;
    case MaskKind::kCausalPadding: return MaskKind::kCausal;
    case MaskKind::kWindowPadding: return MaskKind::kWindow;
    default: return kind;
  }
}

bool IsMultiHeadAttention(const Node& node) { return node.domain() == kDomain && node.op_type() == kOpType; }

}  // namespace attune::mha
