// RETURN_IF_ERROR / ASSIGN_OR_RETURN: Debian's Abseil 20220623 ships no status macros.
#pragma once

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <string_view>

#define ATTUNE_CONCAT_INNER(a, b) a##b
#define ATTUNE_CONCAT(a, b) ATTUNE_CONCAT_INNER(a, b)

#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status attune_status_ = (expr);            \
    if (!attune_status_.ok()) return attune_status_;   \
  } while (0)

#define ASSIGN_OR_RETURN(lhs, rexpr) \
  ATTUNE_ASSIGN_OR_RETURN_IMPL(ATTUNE_CONCAT(attune_statusor_, __LINE__), lhs, rexpr)

#define ATTUNE_ASSIGN_OR_RETURN_IMPL(statusor, lhs, rexpr) \
  auto statusor = (rexpr);                                 \
  if (!statusor.ok()) return statusor.status();            \
  lhs = std::move(statusor).value()

namespace attune {

/// The same status with `prefix: ` in front of its message, code kept.
absl::Status Annotate(const absl::Status& status, std::string_view prefix);

}  // namespace attune
