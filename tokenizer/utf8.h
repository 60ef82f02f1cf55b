// UTF-8 as the tokenizer needs it: validation that says where, one code point
// at a time, the byte-level alphabet of GPT-2, and the text a lossy decode shows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace attune::tok {

/// Byte offset of the first byte that does not start a valid UTF-8 sequence
/// (overlong forms, surrogates and code points above U+10FFFF included), or
/// npos when the whole text is valid.
size_t FindInvalidUtf8(std::string_view text);

/// Length in bytes of the (valid) UTF-8 character starting with `lead`.
inline size_t Utf8Length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead >> 5) == 0x6) return 2;
  if ((lead >> 4) == 0xE) return 3;
  return 4;
}

/// The code point at `text[pos]` (valid UTF-8), advancing `pos` past it.
char32_t NextCodePoint(std::string_view text, size_t& pos);
/// Appends the UTF-8 encoding of `cp`.
void AppendUtf8(std::string& out, char32_t cp);

/// Length of the longest prefix of `bytes` that does not end inside a
/// multi-byte character (a streamed text is cut there).
size_t CompleteUtf8Prefix(std::string_view bytes);

/// Invalid sequences replaced by U+FFFD, one per maximal invalid subpart, as
/// Rust's String::from_utf8_lossy does.
std::string LossyUtf8(std::string_view bytes);

/// GPT-2's byte-level alphabet: every byte is one printable code point
/// (bytes_to_unicode). ByteLevelChar(b) is that code point's UTF-8.
const std::string& ByteLevelChar(uint8_t byte);
/// The byte a byte-level code point stands for, or -1 for any other code point.
int ByteLevelByte(char32_t cp);

/// Unicode classes the pre-tokenizers and normalizers use.
bool IsWhitespace(char32_t cp);
bool IsPunctuation(char32_t cp);   // ASCII punctuation or a general category P*
bool IsNumeric(char32_t cp);       // Nd, Nl, No
bool IsCombiningMark(char32_t cp); // Mn, Mc, Me
bool IsControl(char32_t cp);       // Cc, Cf, ... except \t \n \r
bool IsChineseChar(char32_t cp);   // the CJK blocks BERT pads with spaces

}  // namespace attune::tok
