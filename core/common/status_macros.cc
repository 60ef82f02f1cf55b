#include "core/common/status_macros.h"

#include "absl/strings/str_cat.h"
#include "core/common/strings.h"

namespace attune {

absl::Status Annotate(const absl::Status& status, std::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(Sv(prefix), ": ", status.message()));
}

}  // namespace attune
