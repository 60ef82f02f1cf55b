// Debian's Abseil is built with its own absl::string_view (not std::string_view),
// so std::string_view must be converted before it goes into StrCat / StrFormat.
#pragma once

#include <string_view>

#include "absl/strings/string_view.h"

namespace attune {

inline absl::string_view Sv(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace attune
