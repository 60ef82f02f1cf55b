#include "core/common/log.h"

#include <cstdio>

namespace attune {

void Logger::Log(LogLevel level, std::string_view message) const {
  if (!Enabled(level)) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "attune [%s] %.*s\n", kNames[static_cast<int>(level)], static_cast<int>(message.size()),
               message.data());
}

}  // namespace attune
