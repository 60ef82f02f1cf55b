// A declarative subgraph matcher: a pattern is a small tree of value
// patterns (op types, wildcards, alternatives, optional wrappers, captures and
// predicates) matched backwards from one value through its producers.
//
//   Pattern scores = Op("MatMul").Inputs({Capture("q"), Op("Transpose").Attr("perm", Ints{0, 1, 3, 2})
//                                                             .Inputs({Capture("k")})});
//   MatchResult r = MatchValue(scores, value);
//   if (r.matched) use(r.match.value("q")); else report(r.failure);
//
// Patterns are immutable values: building a new one from an old one never
// changes the old one, so a fusion can keep reusable pieces in a table. The
// matcher backtracks through every alternative (OneOf, commutative inputs,
// optional wrappers) and explains a miss with the check that failed after
// the match had got furthest.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/ir/attribute.h"
#include "core/ir/graph.h"
#include "engine/pattern/match.h"

namespace attune::pattern {

using Ints = std::vector<int64_t>;

/// Matches one value; see the factories below.
class PatternNode {
 public:
  virtual ~PatternNode() = default;
  /// Calls `next` once for every way `value` matches (stopping when `next`
  /// returns true) and returns whether some call returned true. Records a
  /// failure on `state` for every way it does not match.
  virtual bool Match(const Value* value, MatchState& state, const Continuation& next) const = 0;
  /// Short text for failure messages: "MatMul", "Div|Mul", "any".
  virtual std::string Describe() const = 0;
};

using Pattern = std::shared_ptr<const PatternNode>;

/// A predicate on a matched node; returns a failure reason or nullopt.
using NodeCheck = std::function<std::optional<std::string>(const Node& node, const Match& match)>;
/// A predicate on a constant tensor; returns a failure reason or nullopt.
using TensorCheck = std::function<std::optional<std::string>(const Tensor& tensor)>;

/// A pattern for a node (through the output it produces). Builder methods
/// return a new OpPattern and leave this one unchanged.
class OpPattern {
 public:
  /// Matches nodes of any of `op_types` in the default ONNX domain.
  explicit OpPattern(std::vector<std::string> op_types);

  /// The node's first inputs match these, in order; inputs past them must be
  /// absent unless IgnoreExtraInputs().
  OpPattern Inputs(std::vector<Pattern> inputs) const;
  /// A two-input node may match its input patterns in either order.
  OpPattern Commutative() const;
  /// Inputs beyond those given to Inputs() are not looked at.
  OpPattern IgnoreExtraInputs() const;
  /// The attribute equals `expected` (ints compare by value; float by value).
  OpPattern Attr(std::string name, AttributeValue expected) const;
  /// As Attr, with `absent` standing for the value when the node has no such attribute.
  OpPattern AttrOr(std::string name, AttributeValue expected, AttributeValue absent) const;
  /// An extra check run after the node's op and attributes matched, before its inputs.
  OpPattern Check(NodeCheck check) const;
  /// Binds the node to `name` (the same name must always bind the same node).
  OpPattern CaptureNode(std::string name) const;
  /// Which output of the node the value must be (default 0).
  OpPattern Output(int index) const;
  /// Nodes of this domain ("" = ai.onnx, the default).
  OpPattern Domain(std::string domain) const;

  operator Pattern() const;  // NOLINT: an OpPattern is used wherever a Pattern is

  /// Checks op type, domain, output, attributes and node checks, not inputs;
  /// returns a failure reason. Used by Wrapped() to test wrappers.
  std::optional<std::string> CheckNodeItself(const Node& node, int output_index, const Match& match) const;
  struct Spec;

 private:
  explicit OpPattern(std::shared_ptr<const Spec> spec) : spec_(std::move(spec)) {}
  std::shared_ptr<Spec> CopySpec() const;
  std::shared_ptr<const Spec> spec_;
};

/// A node pattern of one op type (or several: Op({"Div", "Mul"})).
OpPattern Op(std::string op_type);
OpPattern Op(std::vector<std::string> op_types);

/// Any present value.
Pattern Any();
/// Any present value, bound to `name`; when `name` is bound already the value
/// must be the same one (so a pattern can say "the same tensor twice").
Pattern Capture(std::string name);
/// `inner`, with the value bound to `name` as above.
Pattern Capture(std::string name, Pattern inner);
/// The first alternative that leads to a complete match (tried in order).
Pattern OneOf(std::vector<Pattern> alternatives);
/// `inner`, or `wrap(inner)`: e.g. Optional(x, [](Pattern p) { return Op("Cast").Inputs({p}); }).
Pattern Optional(Pattern inner, const std::function<Pattern(Pattern)>& wrap);
/// `inner` seen through any number of single-data-input wrapper nodes (data
/// input 0), each matching one of `wrappers` (their inputs are not examined).
/// The wrappers become part of the match.
Pattern Wrapped(Pattern inner, std::vector<OpPattern> wrappers);
/// A value with constant data (initializer, folded constant, Constant node or
/// Identity of one) that passes `check`.
Pattern ConstantWhere(std::string description, TensorCheck check);
/// A constant whose elements all hold one number, bound to `name` (the value)
/// and recorded as a number: match.number(name).
Pattern ScalarConstant(std::string name);
/// As ScalarConstant, and the number must satisfy `check` (a reason on failure).
Pattern ScalarConstant(std::string name, std::function<std::optional<std::string>(double)> check);

/// Matches `pattern` at `value`: every way of matching is tried until
/// `accept` (when given) returns no failure for the bindings.
MatchResult MatchValue(const Pattern& pattern, const Value* value,
                       const std::function<std::optional<std::string>(const Match&)>& accept = nullptr);

}  // namespace attune::pattern
