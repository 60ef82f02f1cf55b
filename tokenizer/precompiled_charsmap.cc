#include "tokenizer/precompiled_charsmap.h"

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"
#include "tokenizer/utf8.h"

namespace attune::tok {
namespace {

constexpr char kWhere[] = "precompiled_charsmap: ";

uint32_t ReadLe32(const char* p) {
  const auto* b = reinterpret_cast<const unsigned char*>(p);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

// A darts-clone unit: the label of the edge into it, whether a value hangs
// below it, and the XOR offset of its children.
bool HasLeaf(uint32_t unit) { return (unit >> 8) & 1; }
uint32_t Value(uint32_t unit) { return unit & ((1u << 31) - 1); }
uint32_t Label(uint32_t unit) { return unit & ((1u << 31) | 0xFF); }
uint32_t Offset(uint32_t unit) { return (unit >> 10) << ((unit & (1u << 9)) >> 6); }

absl::Status Broken(std::string_view what) { return absl::InvalidArgumentError(absl::StrCat(kWhere, Sv(what))); }

}  // namespace

absl::StatusOr<PrecompiledCharsMap> PrecompiledCharsMap::FromBlob(std::string_view blob) {
  if (blob.size() < 4) return Broken("shorter than its 4-byte header");
  const uint32_t trie_bytes = ReadLe32(blob.data());
  if (trie_bytes == 0 || trie_bytes % 4 != 0)
    return Broken(absl::StrCat("the trie size ", trie_bytes, " is not a positive multiple of 4"));
  if (trie_bytes > blob.size() - 4)
    return Broken(absl::StrCat("the trie size ", trie_bytes, " exceeds the ", blob.size() - 4, " bytes after the header"));
  PrecompiledCharsMap map;
  map.units_.resize(trie_bytes / 4);
  for (size_t i = 0; i < map.units_.size(); ++i) map.units_[i] = ReadLe32(blob.data() + 4 + 4 * i);
  map.replacements_.assign(blob.substr(4 + trie_bytes));
  if (const size_t bad = FindInvalidUtf8(map.replacements_); bad != std::string_view::npos)
    return Broken(absl::StrCat("the replacement strings are not valid UTF-8 at byte ", bad));
  return map;
}

absl::StatusOr<std::string_view> PrecompiledCharsMap::Replacement(uint32_t offset) const {
  if (offset >= replacements_.size())
    return Broken(absl::StrCat("a rule points at replacement byte ", offset, " of ", replacements_.size()));
  if ((static_cast<unsigned char>(replacements_[offset]) & 0xC0) == 0x80)
    return Broken(absl::StrCat("a rule points inside a character (replacement byte ", offset, ")"));
  std::string_view rest(replacements_);
  rest.remove_prefix(offset);
  return rest.substr(0, rest.find('\0'));
}

absl::StatusOr<PrecompiledCharsMap::Match> PrecompiledCharsMap::Find(std::string_view text, bool longest) const {
  const size_t n = units_.size();
  size_t node = Offset(units_[0]);
  Match best;
  uint32_t best_value = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte == 0) break;
    node ^= byte;
    if (node >= n || Label(units_[node]) != byte) break;
    const uint32_t unit = units_[node];
    node ^= Offset(unit);
    if (!HasLeaf(unit)) continue;
    if (node >= n) return Broken(absl::StrCat("a trie value lies outside its ", n, " units"));
    best.length = i + 1;
    best_value = Value(units_[node]);
    if (!longest) break;
  }
  if (best.length == 0) return best;
  auto replacement = Replacement(best_value);
  if (!replacement.ok()) return replacement.status();
  best.replacement = *replacement;
  return best;
}

}  // namespace attune::tok
