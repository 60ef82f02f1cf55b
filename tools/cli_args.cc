#include "tools/cli_args.h"

#include <iterator>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/common/escape.h"

namespace attune::cli {

absl::StatusOr<Args> Args::Parse(int argc, char** argv, int first, const FlagSpec& spec) {
  Args args;
  for (int i = first; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg.size() < 2 || arg.rfind("--", 0) != 0 || arg == "--") {
      if (arg.size() > 1 && arg[0] == '-' && arg != "-")
        return absl::InvalidArgumentError(absl::StrCat("unknown option ", QuoteName(arg)));
      args.positionals_.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (const size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (spec.switches.count(name)) {
      if (value) return absl::InvalidArgumentError(absl::StrCat("option --", name, " takes no value"));
      args.values_.emplace(name, "");
      continue;
    }
    if (!spec.valued.count(name)) return absl::InvalidArgumentError(absl::StrCat("unknown option '--", name, "'"));
    if (!value) {
      if (i + 1 >= argc) return absl::InvalidArgumentError(absl::StrCat("option --", name, " needs a value"));
      value = argv[++i];
    }
    args.values_.emplace(name, *value);
  }
  return args;
}

std::optional<std::string> Args::Value(const std::string& flag) const {
  auto [begin, end] = values_.equal_range(flag);
  if (begin == end) return std::nullopt;
  return std::prev(end)->second;
}

std::vector<std::string> Args::Values(const std::string& flag) const {
  std::vector<std::string> out;
  auto [begin, end] = values_.equal_range(flag);
  for (auto it = begin; it != end; ++it) out.push_back(it->second);
  return out;
}

absl::StatusOr<int64_t> Args::Int(const std::string& flag, int64_t fallback) const {
  auto v = Value(flag);
  if (!v) return fallback;
  int64_t n;
  if (!absl::SimpleAtoi(*v, &n) || n < 0)
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " needs a non-negative integer, got '", *v, "'"));
  return n;
}

absl::StatusOr<double> Args::Double(const std::string& flag, double fallback) const {
  auto v = Value(flag);
  if (!v) return fallback;
  double d;
  if (!absl::SimpleAtod(*v, &d) || d < 0)
    return absl::InvalidArgumentError(absl::StrCat("--", flag, " needs a non-negative number, got '", *v, "'"));
  return d;
}

absl::StatusOr<std::vector<int64_t>> ParseIdList(const std::string& flag, const std::string& text) {
  std::vector<int64_t> ids;
  for (absl::string_view part : absl::StrSplit(text, absl::ByAnyChar(", "), absl::SkipWhitespace())) {
    int64_t id;
    if (!absl::SimpleAtoi(part, &id))
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, ": ", QuoteName(std::string(part)), " is not a token id (expected ID,ID,...)"));
    ids.push_back(id);
  }
  return ids;
}

}  // namespace attune::cli
