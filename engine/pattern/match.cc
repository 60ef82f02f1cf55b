#include "engine/pattern/match.h"

#include <algorithm>

namespace attune::pattern {

const Value* Match::value(std::string_view name) const {
  for (const auto& [n, v] : values_)
    if (n == name) return v;
  return nullptr;
}

Node* Match::node(std::string_view name) const {
  for (const auto& [n, node] : nodes_by_name_)
    if (n == name) return node;
  return nullptr;
}

std::optional<double> Match::number(std::string_view name) const {
  for (const auto& [n, x] : numbers_)
    if (n == name) return x;
  return std::nullopt;
}

std::vector<Node*> Match::nodes() const {
  std::vector<Node*> out;
  for (Node* n : matched_)
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

MatchState::Mark MatchState::mark() const {
  return Mark{match_.values_.size(), match_.nodes_by_name_.size(), match_.numbers_.size(), match_.matched_.size()};
}

void MatchState::Restore(const Mark& m) {
  match_.values_.resize(m.values);
  match_.nodes_by_name_.resize(m.nodes);
  match_.numbers_.resize(m.numbers);
  match_.matched_.resize(m.matched);
}

bool MatchState::BindValue(const std::string& name, const Value* value) {
  if (const Value* bound = match_.value(name)) return bound == value;
  match_.values_.emplace_back(name, value);
  return true;
}

bool MatchState::BindNode(const std::string& name, Node* node) {
  if (Node* bound = match_.node(name)) return bound == node;
  match_.nodes_by_name_.emplace_back(name, node);
  return true;
}

void MatchState::BindNumber(const std::string& name, double number) { match_.numbers_.emplace_back(name, number); }

void MatchState::Fail(std::string reason, size_t bonus) {
  const size_t progress = match_.matched_.size() + bonus;
  if (!has_failure_ || progress > best_progress_) {
    has_failure_ = true;
    best_progress_ = progress;
    best_failure_ = std::move(reason);
  }
}

}  // namespace attune::pattern
