// Names come from the model: a value called "x\r\n" must not break an error
// message over two lines or send control characters to a terminal. Every
// message that quotes a node, value or op name goes through these.
#pragma once

#include <string>
#include <string_view>

namespace attune {

/// `text` with control characters and DEL written as escapes: \n, \r, \t,
/// \xNN for the rest. Printable bytes (UTF-8 included) stay, backslashes too,
/// so escaping an escaped text changes nothing.
std::string EscapeControl(std::string_view text);

/// The name between single quotes, escaped: 'a\r\nb'.
std::string QuoteName(std::string_view name);

}  // namespace attune
