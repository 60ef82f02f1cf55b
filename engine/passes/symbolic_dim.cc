#include "engine/passes/symbolic_dim.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"

namespace attune {
namespace {

bool IsIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Parses the grammar our own ToString() prints:
//   expr := ['-'] term (('+'|'-') term)*    term := factor ('*' factor)*
//   factor := integer | identifier | '(' opaque text ')'
// Anything else is not an expression (the caller keeps the text as one symbol).
class Parser {
 public:
  explicit Parser(const std::string& text) : s_(text) {}

  std::optional<DimExpr> ParseAll() {
    auto e = Expr();
    SkipSpaces();
    if (!e || pos_ != s_.size()) return std::nullopt;
    return e;
  }

 private:
  void SkipSpaces() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool Eat(char c) {
    SkipSpaces();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  std::optional<DimExpr> Expr() {
    bool negate = Eat('-');
    auto acc = Term();
    if (!acc) return std::nullopt;
    if (negate) acc = DimExpr::Sub(DimExpr(), *acc);
    while (acc) {
      if (Eat('+')) {
        auto t = Term();
        if (!t) return std::nullopt;
        acc = DimExpr::Add(*acc, *t);
      } else if (Eat('-')) {
        auto t = Term();
        if (!t) return std::nullopt;
        acc = DimExpr::Sub(*acc, *t);
      } else {
        break;
      }
    }
    return acc;
  }

  std::optional<DimExpr> Term() {
    auto acc = Factor();
    while (acc && Eat('*')) {
      auto f = Factor();
      if (!f) return std::nullopt;
      acc = DimExpr::Mul(*acc, *f);
    }
    return acc;
  }

  std::optional<DimExpr> Factor() {
    SkipSpaces();
    if (pos_ >= s_.size()) return std::nullopt;
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t value = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, s_[pos_] - '0', &value))
          return std::nullopt;
        ++pos_;
      }
      return DimExpr::Constant(value);
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
      return DimExpr::Symbol(s_.substr(start, pos_ - start));
    }
    if (c == '(') {
      int depth = 0;
      const size_t start = pos_ + 1;
      for (; pos_ < s_.size(); ++pos_) {
        if (s_[pos_] == '(') ++depth;
        if (s_[pos_] == ')' && --depth == 0) break;
      }
      if (pos_ >= s_.size()) return std::nullopt;
      std::string inner = s_.substr(start, pos_ - start);
      ++pos_;
      return DimExpr::Symbol(inner);
    }
    return std::nullopt;
  }

  const std::string& s_;
  size_t pos_ = 0;
};

std::string FactorText(const std::string& symbol) {
  return IsIdentifier(symbol) ? symbol : absl::StrCat("(", symbol, ")");
}

}  // namespace

DimExpr DimExpr::Constant(int64_t value) {
  DimExpr e;
  if (value != 0) e.terms_[{}] = value;
  return e;
}

DimExpr DimExpr::Symbol(const std::string& name) {
  DimExpr e;
  e.terms_[{name}] = 1;
  return e;
}

std::optional<DimExpr> DimExpr::FromDim(const Dim& dim) {
  if (dim.is_known()) return Constant(dim.value());
  if (!dim.is_symbol()) return std::nullopt;
  if (auto parsed = Parser(dim.symbol()).ParseAll()) return parsed;
  return Symbol(dim.symbol());
}

bool DimExpr::is_constant() const { return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty()); }

int64_t DimExpr::constant_value() const { return terms_.empty() ? 0 : terms_.begin()->second; }

int64_t DimExpr::constant_term() const {
  auto it = terms_.find(Monomial{});
  return it == terms_.end() ? 0 : it->second;
}

bool DimExpr::IsNonNegative() const {
  return std::all_of(terms_.begin(), terms_.end(), [](const auto& t) { return t.second > 0; });
}

Dim DimExpr::ToDim() const { return is_constant() ? Dim::Known(constant_value()) : Dim::Symbol(ToString()); }

std::string DimExpr::ToString() const {
  if (terms_.empty()) return "0";
  // A lone opaque symbol prints as itself so that pass-through dims keep their spelling.
  if (terms_.size() == 1 && terms_.begin()->second == 1 && terms_.begin()->first.size() == 1)
    return terms_.begin()->first[0];
  std::string out;
  auto append_term = [&](const Monomial& factors, int64_t coefficient) {
    const bool first = out.empty();
    if (coefficient < 0) out += "-";
    else if (!first) out += "+";
    const uint64_t magnitude = coefficient < 0 ? 0 - static_cast<uint64_t>(coefficient) : coefficient;
    bool need_star = false;
    if (magnitude != 1 || factors.empty()) {
      absl::StrAppend(&out, magnitude);
      need_star = true;
    }
    for (const std::string& f : factors) {
      if (need_star) out += "*";
      out += FactorText(f);
      need_star = true;
    }
  };
  for (const auto& [factors, coefficient] : terms_)
    if (!factors.empty()) append_term(factors, coefficient);
  auto constant = terms_.find(Monomial{});
  if (constant != terms_.end()) append_term(constant->first, constant->second);
  return out;
}

std::optional<DimExpr> DimExpr::Add(const DimExpr& a, const DimExpr& b) {
  DimExpr r = a;
  for (const auto& [factors, coefficient] : b.terms_) {
    int64_t& slot = r.terms_[factors];
    if (__builtin_add_overflow(slot, coefficient, &slot)) return std::nullopt;
    if (slot == 0) r.terms_.erase(factors);
  }
  return r;
}

std::optional<DimExpr> DimExpr::Sub(const DimExpr& a, const DimExpr& b) {
  DimExpr negated;
  for (const auto& [factors, coefficient] : b.terms_) {
    if (coefficient == INT64_MIN) return std::nullopt;
    negated.terms_[factors] = -coefficient;
  }
  return Add(a, negated);
}

std::optional<DimExpr> DimExpr::Mul(const DimExpr& a, const DimExpr& b) {
  DimExpr r;
  for (const auto& [fa, ca] : a.terms_) {
    for (const auto& [fb, cb] : b.terms_) {
      Monomial factors;
      std::merge(fa.begin(), fa.end(), fb.begin(), fb.end(), std::back_inserter(factors));
      int64_t product;
      if (__builtin_mul_overflow(ca, cb, &product)) return std::nullopt;
      int64_t& slot = r.terms_[factors];
      if (__builtin_add_overflow(slot, product, &slot)) return std::nullopt;
      if (slot == 0) r.terms_.erase(factors);
    }
  }
  return r;
}

std::optional<DimExpr> DimExpr::DivExact(const DimExpr& a, const DimExpr& b) {
  if (b.terms_.size() != 1) return std::nullopt;
  const auto& [bf, bc] = *b.terms_.begin();
  if (bc == 0) return std::nullopt;
  DimExpr r;
  for (const auto& [factors, coefficient] : a.terms_) {
    if (coefficient % bc != 0) return std::nullopt;
    if (!std::includes(factors.begin(), factors.end(), bf.begin(), bf.end())) return std::nullopt;
    Monomial rest;
    std::set_difference(factors.begin(), factors.end(), bf.begin(), bf.end(), std::back_inserter(rest));
    if (coefficient == INT64_MIN && bc == -1) return std::nullopt;
    r.terms_[rest] = coefficient / bc;
  }
  return r;
}

bool DimsEqual(const Dim& a, const Dim& b) {
  if (a.is_known() && b.is_known()) return a.value() == b.value();
  if (a.is_symbol() && b.is_symbol() && a.symbol() == b.symbol()) return true;
  auto ea = DimExpr::FromDim(a);
  auto eb = DimExpr::FromDim(b);
  return ea && eb && *ea == *eb;
}

namespace {

template <typename Op>
Dim Combine(const Dim& a, const Dim& b, Op op) {
  auto ea = DimExpr::FromDim(a);
  auto eb = DimExpr::FromDim(b);
  if (!ea || !eb) return Dim();
  auto r = op(*ea, *eb);
  return r ? r->ToDim() : Dim();
}

}  // namespace

Dim DimAdd(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::Add); }
Dim DimSub(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::Sub); }
Dim DimMul(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::Mul); }
Dim DimDivExact(const Dim& a, const Dim& b) { return Combine(a, b, DimExpr::DivExact); }

Dim DimMin(const Dim& a, const Dim& b) {
  if (a.is_unknown() || b.is_unknown()) return Dim();
  if (a.is_known() && b.is_known()) return Dim::Known(std::min(a.value(), b.value()));
  if (DimsEqual(a, b)) return a;
  std::string x = DimExpr::FromDim(a)->ToString(), y = DimExpr::FromDim(b)->ToString();
  if (y < x) std::swap(x, y);
  return Dim::Symbol(absl::StrCat("min(", x, ",", y, ")"));
}

namespace {

// The two arguments of a "min(x,y)" symbol.
std::optional<std::pair<std::string, std::string>> MinArguments(const Dim& d) {
  if (!d.is_symbol()) return std::nullopt;
  const std::string& s = d.symbol();
  if (s.size() < 6 || s.compare(0, 4, "min(") != 0 || s.back() != ')') return std::nullopt;
  int depth = 0;
  for (size_t i = 4; i + 1 < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')') --depth;
    if (s[i] == ',' && depth == 0) return std::make_pair(s.substr(4, i - 4), s.substr(i + 1, s.size() - i - 2));
  }
  return std::nullopt;
}

}  // namespace

bool BroadcastsInto(const Dim& a, const Dim& b) {
  if (DimsEqual(a, b)) return true;
  auto args = MinArguments(a);
  if (!args) return false;
  // a = min(b, C) <= b, and a = 0 only when b = 0 (C >= 1): so a is 1 or b
  // in any valid broadcast, and the result is b.
  auto is_b_and_number = [&](const std::string& x, const std::string& y) {
    auto c = DimExpr::FromDim(Dim::Symbol(y));
    return DimsEqual(Dim::Symbol(x), b) && c && c->is_constant() && c->constant_value() >= 1;
  };
  return is_b_and_number(args->first, args->second) || is_b_and_number(args->second, args->first);
}

Dim DimProduct(const std::vector<Dim>& dims) {
  std::optional<DimExpr> acc = DimExpr::Constant(1);
  for (const Dim& d : dims) {
    auto e = DimExpr::FromDim(d);
    if (!e) return Dim();
    acc = DimExpr::Mul(*acc, *e);
    if (!acc) return Dim();
  }
  return acc->ToDim();
}

}  // namespace attune
