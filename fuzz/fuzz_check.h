// What every fuzz target demands of an error: a canonical code that is not
// Internal or Unknown (those mean a broken invariant or a stray exception),
// and a message of one line without control characters (names from the model
// go through core/common/escape.h). A violation aborts, which libFuzzer and
// the replay both report as a crash with the offending message.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "absl/status/status.h"

namespace attune::fuzz {

/// Aborts with `what` and the status when `status` breaks the error rules above.
inline void CheckError(const absl::Status& status, std::string_view what) {
  if (status.ok()) return;
  const std::string_view message(status.message().data(), status.message().size());
  const char* broken = nullptr;
  if (status.code() == absl::StatusCode::kInternal || status.code() == absl::StatusCode::kUnknown)
    broken = "an Internal or Unknown error";
  if (message.empty()) broken = "an error without a message";
  for (const char c : message) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) broken = "a control character in an error message";
  }
  if (broken == nullptr) return;
  std::fprintf(stderr, "fuzz: %.*s: %s: %s\n", static_cast<int>(what.size()), what.data(), broken,
               status.ToString().c_str());
  std::abort();
}

/// Aborts with `why` (a finding that is not about an error message).
[[noreturn]] inline void Fail(std::string_view why) {
  std::fprintf(stderr, "fuzz: %.*s\n", static_cast<int>(why.size()), why.data());
  std::abort();
}

}  // namespace attune::fuzz
