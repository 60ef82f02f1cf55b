#include "engine/pattern/pattern.h"

#include <algorithm>
#include <cmath>
#include <variant>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/common/escape.h"
#include "engine/pattern/constants.h"

namespace attune::pattern {

struct OpPattern::Spec {
  struct AttrCheck {
    std::string name;
    AttributeValue expected;
    std::optional<AttributeValue> absent;
  };
  std::vector<std::string> op_types;
  std::string domain;
  std::vector<Pattern> inputs;
  bool inputs_given = false;
  bool commutative = false;
  bool ignore_extra_inputs = false;
  std::vector<AttrCheck> attrs;
  std::vector<NodeCheck> checks;
  std::string capture;
  int output = 0;
};

namespace {

// Final checks (the caller's accept) count as further than any structural step.
constexpr size_t kAcceptBonus = size_t{1} << 20;

std::string ValueLabel(const Value* v) { return absl::StrCat(QuoteName(v->name())); }

std::string AttributeText(const AttributeValue& a) {
  struct Visitor {
    std::string operator()(int64_t v) const { return absl::StrCat(v); }
    std::string operator()(float v) const { return absl::StrCat(v); }
    std::string operator()(const std::string& v) const { return absl::StrCat("\"", v, "\""); }
    std::string operator()(const Tensor& t) const { return t.DebugString(); }
    std::string operator()(const std::vector<int64_t>& v) const { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }
    std::string operator()(const std::vector<float>& v) const { return absl::StrCat("[", absl::StrJoin(v, ", "), "]"); }
    std::string operator()(const std::vector<std::string>& v) const {
      return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
    }
  };
  return std::visit(Visitor{}, a);
}

// Tensors never compare equal (patterns do not match tensor attributes).
bool AttributesEqual(const AttributeValue& a, const AttributeValue& b) {
  if (a.index() != b.index()) {
    // An int attribute compared with a float expectation (or back) by value.
    if (const auto* i = std::get_if<int64_t>(&a)) {
      if (const auto* f = std::get_if<float>(&b)) return static_cast<double>(*i) == *f;
    }
    if (const auto* f = std::get_if<float>(&a)) {
      if (const auto* i = std::get_if<int64_t>(&b)) return static_cast<double>(*i) == *f;
    }
    return false;
  }
  if (std::holds_alternative<Tensor>(a)) return false;
  return std::visit(
      [&](const auto& x) -> bool {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          return false;
        } else {
          return x == std::get<T>(b);
        }
      },
      a);
}

std::optional<std::string> CheckSpec(const OpPattern::Spec& spec, const Node& node, int output_index,
                                     const Match& match) {
  if (node.domain() != spec.domain ||
      std::find(spec.op_types.begin(), spec.op_types.end(), node.op_type()) == spec.op_types.end()) {
    return absl::StrCat("expected ", absl::StrJoin(spec.op_types, "|"), ", found ", node.Describe());
  }
  if (output_index != spec.output)
    return absl::StrCat("uses output ", output_index, " of ", node.Describe(), ", expected output ", spec.output);
  for (const auto& check : spec.attrs) {
    auto it = node.attributes().all().find(check.name);
    const AttributeValue* actual = nullptr;
    if (it != node.attributes().all().end()) {
      actual = &it->second;
    } else if (check.absent.has_value()) {
      actual = &*check.absent;
    } else {
      return absl::StrCat(node.Describe(), " has no attribute ", check.name, " (expected ",
                          AttributeText(check.expected), ")");
    }
    if (!AttributesEqual(*actual, check.expected))
      return absl::StrCat(node.Describe(), ": attribute ", check.name, " is ", AttributeText(*actual),
                          ", expected ", AttributeText(check.expected));
  }
  for (const auto& check : spec.checks)
    if (auto why = check(node, match)) return absl::StrCat(node.Describe(), ": ", *why);
  return std::nullopt;
}

class OpNode final : public PatternNode {
 public:
  explicit OpNode(std::shared_ptr<const OpPattern::Spec> spec) : spec_(std::move(spec)) {}

  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    if (value == nullptr) {
      state.Fail(absl::StrCat("expected ", Describe(), ", found an omitted input"));
      return false;
    }
    Node* node = value->producer();
    if (node == nullptr) {
      state.Fail(absl::StrCat(ValueLabel(value), " is ", value->is_graph_input() ? "a graph input" : "a constant",
                              ", expected ", Describe()));
      return false;
    }
    if (auto why = CheckSpec(*spec_, *node, value->producer_output(), state.match())) {
      state.Fail(*why);
      return false;
    }
    const MatchState::Mark mark = state.mark();
    if (!spec_->capture.empty() && !state.BindNode(spec_->capture, node)) {
      state.Fail(absl::StrCat(node->Describe(), " is not the node already bound as ", spec_->capture));
      return false;
    }
    state.AddMatchedNode(node);
    bool ok = false;
    if (!spec_->inputs_given) {
      ok = next(state);
    } else if (auto why = CheckArity(*node)) {
      state.Fail(*why);
    } else {
      std::vector<int> order(spec_->inputs.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
      ok = MatchInputs(*node, order, 0, state, next);
      if (!ok && spec_->commutative && order.size() == 2) {
        std::swap(order[0], order[1]);
        ok = MatchInputs(*node, order, 0, state, next);
      }
    }
    if (!ok) state.Restore(mark);
    return ok;
  }

  std::string Describe() const override { return absl::StrJoin(spec_->op_types, "|"); }

 private:
  std::optional<std::string> CheckArity(const Node& node) const {
    const int wanted = static_cast<int>(spec_->inputs.size());
    if (node.num_inputs() < wanted) {
      // Missing trailing inputs are omitted ones; the input patterns see nullptr.
      return std::nullopt;
    }
    if (spec_->ignore_extra_inputs) return std::nullopt;
    for (int i = wanted; i < node.num_inputs(); ++i)
      if (node.input(i) != nullptr)
        return absl::StrCat(node.Describe(), " has ", node.num_inputs(), " inputs, expected ", wanted);
    return std::nullopt;
  }

  bool MatchInputs(const Node& node, const std::vector<int>& order, size_t i, MatchState& state,
                   const Continuation& next) const {
    if (i == order.size()) return next(state);
    auto rest = [&](MatchState& s) { return MatchInputs(node, order, i + 1, s, next); };
    return spec_->inputs[i]->Match(node.input(order[i]), state, rest);
  }

  std::shared_ptr<const OpPattern::Spec> spec_;
};

class AnyNode final : public PatternNode {
 public:
  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    if (value == nullptr) {
      state.Fail("expected a tensor, found an omitted input");
      return false;
    }
    return next(state);
  }
  std::string Describe() const override { return "any"; }
};

class CaptureNode final : public PatternNode {
 public:
  CaptureNode(std::string name, Pattern inner) : name_(std::move(name)), inner_(std::move(inner)) {}

  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    if (value == nullptr) {
      state.Fail(absl::StrCat("expected ", name_, ", found an omitted input"));
      return false;
    }
    const MatchState::Mark mark = state.mark();
    if (!state.BindValue(name_, value)) {
      state.Fail(absl::StrCat(ValueLabel(value), " is not the tensor bound as ", name_, " ('",
                              state.match().value(name_)->name(), "')"));
      return false;
    }
    const bool ok = inner_->Match(value, state, next);
    if (!ok) state.Restore(mark);
    return ok;
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  std::string name_;
  Pattern inner_;
};

class OneOfNode final : public PatternNode {
 public:
  explicit OneOfNode(std::vector<Pattern> alternatives) : alternatives_(std::move(alternatives)) {}

  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    for (const Pattern& p : alternatives_)
      if (p->Match(value, state, next)) return true;
    return false;
  }
  std::string Describe() const override {
    std::vector<std::string> parts;
    for (const Pattern& p : alternatives_) parts.push_back(p->Describe());
    return absl::StrCat("(", absl::StrJoin(parts, " or "), ")");
  }

 private:
  std::vector<Pattern> alternatives_;
};

class WrappedNode final : public PatternNode {
 public:
  WrappedNode(Pattern inner, std::vector<OpPattern> wrappers) : inner_(std::move(inner)), wrappers_(std::move(wrappers)) {}

  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    return MatchAt(value, 0, state, next);
  }
  std::string Describe() const override { return inner_->Describe(); }

 private:
  static constexpr int kMaxWrappers = 16;

  bool MatchAt(const Value* value, int depth, MatchState& state, const Continuation& next) const {
    if (inner_->Match(value, state, next)) return true;
    if (value == nullptr || depth >= kMaxWrappers) return false;
    Node* node = value->producer();
    if (node == nullptr) return false;
    for (const OpPattern& w : wrappers_) {
      if (w.CheckNodeItself(*node, value->producer_output(), state.match())) continue;
      const MatchState::Mark mark = state.mark();
      state.AddMatchedNode(node);
      if (MatchAt(node->input(0), depth + 1, state, next)) return true;
      state.Restore(mark);
      return false;  // the first wrapper that fits decides: the node is that wrapper
    }
    return false;
  }

  Pattern inner_;
  std::vector<OpPattern> wrappers_;
};

class ConstantNode final : public PatternNode {
 public:
  ConstantNode(std::string description, TensorCheck check)
      : description_(std::move(description)), check_(std::move(check)) {}

  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    if (value == nullptr) {
      state.Fail(absl::StrCat("expected ", description_, ", found an omitted input"));
      return false;
    }
    const Tensor* t = ConstantOf(value);
    if (t == nullptr) {
      state.Fail(absl::StrCat(ValueLabel(value), " is not a constant (expected ", description_, ")"));
      return false;
    }
    if (check_) {
      if (auto why = check_(*t)) {
        state.Fail(absl::StrCat(ValueLabel(value), ": ", *why));
        return false;
      }
    }
    return next(state);
  }
  std::string Describe() const override { return description_; }

 private:
  std::string description_;
  TensorCheck check_;
};

class ScalarNode final : public PatternNode {
 public:
  ScalarNode(std::string name, std::function<std::optional<std::string>(double)> check)
      : name_(std::move(name)), check_(std::move(check)) {}

  bool Match(const Value* value, MatchState& state, const Continuation& next) const override {
    if (value == nullptr) {
      state.Fail(absl::StrCat("expected constant ", name_, ", found an omitted input"));
      return false;
    }
    const Tensor* t = ConstantOf(value);
    if (t == nullptr) {
      state.Fail(absl::StrCat(name_, " ", ValueLabel(value), " is not a constant"));
      return false;
    }
    std::optional<double> x = UniformValue(*t);
    if (!x) {
      state.Fail(absl::StrCat(name_, " ", ValueLabel(value), " is not one number (", t->DebugString(), ")"));
      return false;
    }
    if (check_) {
      if (auto why = check_(*x)) {
        state.Fail(absl::StrCat(name_, " ", ValueLabel(value), " = ", *x, ": ", *why));
        return false;
      }
    }
    const MatchState::Mark mark = state.mark();
    if (!state.BindValue(name_, value)) {
      state.Fail(absl::StrCat(ValueLabel(value), " is not the tensor bound as ", name_));
      return false;
    }
    state.BindNumber(name_, *x);
    const bool ok = next(state);
    if (!ok) state.Restore(mark);
    return ok;
  }
  std::string Describe() const override { return absl::StrCat("constant ", name_); }

 private:
  std::string name_;
  std::function<std::optional<std::string>(double)> check_;
};

}  // namespace

// ---- OpPattern ----

OpPattern::OpPattern(std::vector<std::string> op_types) {
  auto spec = std::make_shared<Spec>();
  spec->op_types = std::move(op_types);
  spec_ = std::move(spec);
}

std::shared_ptr<OpPattern::Spec> OpPattern::CopySpec() const { return std::make_shared<Spec>(*spec_); }

OpPattern OpPattern::Inputs(std::vector<Pattern> inputs) const {
  auto s = CopySpec();
  s->inputs = std::move(inputs);
  s->inputs_given = true;
  return OpPattern(std::move(s));
}

OpPattern OpPattern::Commutative() const {
  auto s = CopySpec();
  s->commutative = true;
  return OpPattern(std::move(s));
}

OpPattern OpPattern::IgnoreExtraInputs() const {
  auto s = CopySpec();
  s->ignore_extra_inputs = true;
  return OpPattern(std::move(s));
}

OpPattern OpPattern::Attr(std::string name, AttributeValue expected) const {
  auto s = CopySpec();
  s->attrs.push_back({std::move(name), std::move(expected), std::nullopt});
  return OpPattern(std::move(s));
}

OpPattern OpPattern::AttrOr(std::string name, AttributeValue expected, AttributeValue absent) const {
  auto s = CopySpec();
  s->attrs.push_back({std::move(name), std::move(expected), std::move(absent)});
  return OpPattern(std::move(s));
}

OpPattern OpPattern::Check(NodeCheck check) const {
  auto s = CopySpec();
  s->checks.push_back(std::move(check));
  return OpPattern(std::move(s));
}

OpPattern OpPattern::CaptureNode(std::string name) const {
  auto s = CopySpec();
  s->capture = std::move(name);
  return OpPattern(std::move(s));
}

OpPattern OpPattern::Output(int index) const {
  auto s = CopySpec();
  s->output = index;
  return OpPattern(std::move(s));
}

OpPattern OpPattern::Domain(std::string domain) const {
  auto s = CopySpec();
  s->domain = domain == "ai.onnx" ? std::string() : std::move(domain);
  return OpPattern(std::move(s));
}

OpPattern::operator Pattern() const { return std::make_shared<OpNode>(spec_); }

std::optional<std::string> OpPattern::CheckNodeItself(const Node& node, int output_index, const Match& match) const {
  return CheckSpec(*spec_, node, output_index, match);
}

// ---- factories ----

OpPattern Op(std::string op_type) { return OpPattern({std::move(op_type)}); }
OpPattern Op(std::vector<std::string> op_types) { return OpPattern(std::move(op_types)); }

Pattern Any() { return std::make_shared<AnyNode>(); }
Pattern Capture(std::string name) { return std::make_shared<CaptureNode>(std::move(name), Any()); }
Pattern Capture(std::string name, Pattern inner) {
  return std::make_shared<CaptureNode>(std::move(name), std::move(inner));
}
Pattern OneOf(std::vector<Pattern> alternatives) { return std::make_shared<OneOfNode>(std::move(alternatives)); }
Pattern Optional(Pattern inner, const std::function<Pattern(Pattern)>& wrap) {
  Pattern wrapped = wrap(inner);
  return OneOf({std::move(inner), std::move(wrapped)});
}
Pattern Wrapped(Pattern inner, std::vector<OpPattern> wrappers) {
  return std::make_shared<WrappedNode>(std::move(inner), std::move(wrappers));
}
Pattern ConstantWhere(std::string description, TensorCheck check) {
  return std::make_shared<ConstantNode>(std::move(description), std::move(check));
}
Pattern ScalarConstant(std::string name) { return std::make_shared<ScalarNode>(std::move(name), nullptr); }
Pattern ScalarConstant(std::string name, std::function<std::optional<std::string>(double)> check) {
  return std::make_shared<ScalarNode>(std::move(name), std::move(check));
}

MatchResult MatchValue(const Pattern& pattern, const Value* value,
                       const std::function<std::optional<std::string>(const Match&)>& accept) {
  MatchState state;
  MatchResult result;
  auto done = [&](MatchState& s) {
    if (accept) {
      if (auto why = accept(s.match())) {
        s.Fail(*why, kAcceptBonus);
        return false;
      }
    }
    result.match = s.match();
    return true;
  };
  result.matched = pattern->Match(value, state, done);
  if (!result.matched) {
    result.failure = state.best_failure().empty() ? "no match" : state.best_failure();
    result.failure_progress = state.best_progress();
  }
  return result;
}

}  // namespace attune::pattern
