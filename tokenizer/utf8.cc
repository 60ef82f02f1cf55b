#include "tokenizer/utf8.h"

#include <array>

#include <utf8proc.h>

namespace attune::tok {

size_t FindInvalidUtf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    char32_t cp;
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2, cp = c & 0x1F;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3, cp = c & 0x0F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4, cp = c & 0x07;
    } else {
      return i;
    }
    if (i + len > n) return i;
    for (size_t k = 1; k < len; ++k) {
      if ((s[i + k] & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
      return i;
    i += len;
  }
  return std::string_view::npos;
}

char32_t NextCodePoint(std::string_view text, size_t& pos) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char c = s[pos];
  const size_t len = Utf8Length(c);
  char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
  for (size_t k = 1; k < len && pos + k < text.size(); ++k) cp = (cp << 6) | (s[pos + k] & 0x3F);
  pos += len;
  return cp;
}

void AppendUtf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

size_t CompleteUtf8Prefix(std::string_view bytes) {
  // Look back at most 3 bytes for a lead byte whose sequence is cut off.
  const size_t n = bytes.size();
  for (size_t back = 1; back <= 4 && back <= n; ++back) {
    const auto c = static_cast<unsigned char>(bytes[n - back]);
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: keep looking for its lead
    if (c < 0x80) return n;
    const size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
    return need > back ? n - back : n;
  }
  return n;
}

std::string LossyUtf8(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  size_t i = 0;
  while (i < bytes.size()) {
    const size_t bad = FindInvalidUtf8(bytes.substr(i));
    if (bad == std::string_view::npos) {
      out.append(bytes.substr(i));
      break;
    }
    out.append(bytes.substr(i, bad));
    i += bad;
    // The maximal subpart: a lead byte and the continuation bytes that could still follow it.
    const auto c = static_cast<unsigned char>(bytes[i]);
    size_t len = 1;
    const size_t want = c >= 0xF0 && c <= 0xF4 ? 4 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xC2 && c <= 0xDF ? 2 : 1;
    while (len < want && i + len < bytes.size()) {
      const auto d = static_cast<unsigned char>(bytes[i + len]);
      const bool ok = (d & 0xC0) == 0x80 && !(len == 1 && ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) ||
                                                            (c == 0xF0 && d < 0x90) || (c == 0xF4 && d > 0x8F)));
      if (!ok) break;
      ++len;
    }
    out.append("\xEF\xBF\xBD");
    i += len;
  }
  return out;
}

namespace {

struct ByteLevelTables {
  std::array<std::string, 256> chars;
  std::array<int16_t, 324> bytes;  // code point -> byte; every alphabet code point is below 324
  ByteLevelTables() {
    bytes.fill(-1);
    int extra = 0;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      const char32_t cp = printable ? b : 256 + extra++;
      AppendUtf8(chars[b], cp);
      bytes[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteLevelTables& Tables() {
  static const ByteLevelTables tables;
  return tables;
}

utf8proc_category_t Category(char32_t cp) { return utf8proc_category(static_cast<utf8proc_int32_t>(cp)); }

}  // namespace

const std::string& ByteLevelChar(uint8_t byte) { return Tables().chars[byte]; }

int ByteLevelByte(char32_t cp) { return cp < 324 ? Tables().bytes[cp] : -1; }

bool IsWhitespace(char32_t cp) {
  if (cp == ' ' || (cp >= '\t' && cp <= '\r') || cp == 0x85) return true;
  const auto c = Category(cp);
  return c == UTF8PROC_CATEGORY_ZS || c == UTF8PROC_CATEGORY_ZL || c == UTF8PROC_CATEGORY_ZP;
}

bool IsPunctuation(char32_t cp) {
  if (cp < 0x80) return (cp >= '!' && cp <= '/') || (cp >= ':' && cp <= '@') || (cp >= '[' && cp <= '`') ||
                        (cp >= '{' && cp <= '~');
  const auto c = Category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool IsNumeric(char32_t cp) {
  const auto c = Category(cp);
  return c == UTF8PROC_CATEGORY_ND || c == UTF8PROC_CATEGORY_NL || c == UTF8PROC_CATEGORY_NO;
}

bool IsCombiningMark(char32_t cp) {
  const auto c = Category(cp);
  return c == UTF8PROC_CATEGORY_MN || c == UTF8PROC_CATEGORY_MC || c == UTF8PROC_CATEGORY_ME;
}

bool IsControl(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  const auto c = Category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CO ||
         c == UTF8PROC_CATEGORY_CN;
}

bool IsChineseChar(char32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B920 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace attune::tok
