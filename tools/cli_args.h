// Command-line parsing for the attune subcommands: positionals plus --flag value / --flag=value.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace attune::cli {

/// What a subcommand accepts: flags that take a value, and switches that do not.
struct FlagSpec {
  std::set<std::string> valued;    // e.g. "input", "threads"
  std::set<std::string> switches;  // e.g. "no-fuse", "json"
};

class Args {
 public:
  /// Parses argv[first..]; InvalidArgument on an unknown flag or a missing value.
  static absl::StatusOr<Args> Parse(int argc, char** argv, int first, const FlagSpec& spec);

  const std::vector<std::string>& positionals() const { return positionals_; }
  bool Has(const std::string& flag) const { return values_.count(flag) > 0; }
  /// The last value given for a flag.
  std::optional<std::string> Value(const std::string& flag) const;
  /// Every value given for a repeatable flag, in order.
  std::vector<std::string> Values(const std::string& flag) const;
  /// A non-negative integer flag, or `fallback` when absent.
  absl::StatusOr<int64_t> Int(const std::string& flag, int64_t fallback) const;
  absl::StatusOr<double> Double(const std::string& flag, double fallback) const;

 private:
  std::vector<std::string> positionals_;
  std::multimap<std::string, std::string> values_;
  std::vector<std::pair<std::string, std::string>> ordered_;
};

/// Token ids separated by commas or spaces ("1,2, 3"); InvalidArgument naming `flag`
/// and the first part that is not an integer.
absl::StatusOr<std::vector<int64_t>> ParseIdList(const std::string& flag, const std::string& text);

}  // namespace attune::cli
