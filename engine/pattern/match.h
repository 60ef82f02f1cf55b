// What a pattern match binds (captured values, nodes and numbers, and every
// node it went through), and the state the matcher keeps while it backtracks.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "core/ir/graph.h"

namespace attune::pattern {

/// The bindings of one successful match.
class Match {
 public:
  /// The value captured as `name`, or nullptr.
  const Value* value(std::string_view name) const;
  /// The same value as a mutable pointer, for rewrites of the graph it came from.
  Value* mutable_value(std::string_view name) const { return const_cast<Value*>(value(name)); }
  /// The node captured as `name`, or nullptr.
  Node* node(std::string_view name) const;
  /// The number captured by a ScalarConstant as `name`.
  std::optional<double> number(std::string_view name) const;
  bool has(std::string_view name) const { return value(name) != nullptr || node(name) != nullptr; }
  /// Every node the pattern went through, in the order they were matched, once each.
  std::vector<Node*> nodes() const;

 private:
  friend class MatchState;
  std::vector<std::pair<std::string, const Value*>> values_;
  std::vector<std::pair<std::string, Node*>> nodes_by_name_;
  std::vector<std::pair<std::string, double>> numbers_;
  std::vector<Node*> matched_;
};

/// Bindings under construction plus the best failure seen so far. Every
/// binding is appended; backtracking truncates back to a saved mark.
class MatchState {
 public:
  struct Mark {
    size_t values, nodes, numbers, matched;
  };
  Mark mark() const;
  void Restore(const Mark& m);

  /// False when `name` is bound to another value.
  bool BindValue(const std::string& name, const Value* value);
  bool BindNode(const std::string& name, Node* node);
  void BindNumber(const std::string& name, double number);
  void AddMatchedNode(Node* node) { match_.matched_.push_back(node); }

  const Match& match() const { return match_; }
  /// Records why a branch failed; the failure after the most matched nodes wins
  /// (the first one among equals), since it is the one closest to a match.
  void Fail(std::string reason, size_t bonus = 0);
  const std::string& best_failure() const { return best_failure_; }
  /// How far the best failure got (matched nodes, plus a bonus for final checks).
  size_t best_progress() const { return best_progress_; }

 private:
  Match match_;
  std::string best_failure_;
  size_t best_progress_ = 0;
  bool has_failure_ = false;
};

/// What to do after a pattern matched; returns true to stop (success).
using Continuation = absl::FunctionRef<bool(MatchState&)>;

struct MatchResult {
  bool matched = false;
  Match match;          // valid when matched
  std::string failure;  // the first failing check of the closest attempt, when not matched
  /// How far that attempt got: compare failures of several patterns with it.
  size_t failure_progress = 0;
};

}  // namespace attune::pattern
