// A tiny leveled logger to stderr: Debian's Abseil has no absl/log.
#pragma once

#include <string_view>

namespace attune {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3, kOff = 4 };

/// Writes "attune [level] message" to stderr for messages at or above its
/// level. A value, not a process-wide setting: each Session carries its own
/// (ExecOptions::logger, from SessionOptions::log_severity) to its passes and
/// kernels, so sessions created with different levels, on any threads, each
/// log at their own.
class Logger {
 public:
  Logger() = default;
  explicit Logger(LogLevel level) : level_(level) {}

  LogLevel level() const { return level_; }
  /// Whether a message of `level` is written (to skip building one that is not).
  bool Enabled(LogLevel level) const { return level >= level_ && level < LogLevel::kOff; }
  void Log(LogLevel level, std::string_view message) const;

 private:
  LogLevel level_ = LogLevel::kWarning;
};

}  // namespace attune
