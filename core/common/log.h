// A tiny leveled logger to stderr: Debian's Abseil has no absl/log.
#pragma once

#include <string_view>

namespace attune {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

/// Messages below this level are dropped (default kWarning; ATTUNE_LOG_LEVEL=debug|info|warning|error|off).
void SetLogLevel(LogLevel level);
LogLevel GetLogLevel();
/// Writes "attune [level] message" to stderr when level is enabled.
void Log(LogLevel level, std::string_view message);

}  // namespace attune
