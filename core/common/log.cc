#include "core/common/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace attune {
namespace {

LogLevel LevelFromEnvironment() {
  const char* env = std::getenv("ATTUNE_LOG_LEVEL");
  if (env == nullptr) return LogLevel::kWarning;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "info") == 0) return LogLevel::kInfo;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  if (std::strcmp(env, "off") == 0) return LogLevel::kOff;
  return LogLevel::kWarning;
}

std::atomic<LogLevel>& CurrentLevel() {
  static std::atomic<LogLevel> level{LevelFromEnvironment()};
  return level;
}

}  // namespace

void SetLogLevel(LogLevel level) { CurrentLevel().store(level); }
LogLevel GetLogLevel() { return CurrentLevel().load(); }

void Log(LogLevel level, std::string_view message) {
  if (level < GetLogLevel()) return;
  static constexpr const char* kNames[] = {"debug", "info", "warning", "error"};
  std::fprintf(stderr, "attune [%s] %.*s\n", kNames[static_cast<int>(level)], static_cast<int>(message.size()),
               message.data());
}

}  // namespace attune
