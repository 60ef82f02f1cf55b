// "Add node 'layer0/add'": the prefix of a kernel's error messages.
#pragma once

#include <string>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "core/common/strings.h"
#include "ops/kernel.h"

namespace attune {

inline std::string NodeLabel(const KernelInfo& info) {
  return absl::StrCat(EscapeControl(info.op_type), " node ", QuoteName(info.node_name));
}

}  // namespace attune
