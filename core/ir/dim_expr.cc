#include "core/ir/dim_expr.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"

namespace attune {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The text between a '(' at `open` and its matching ')', or nullopt when it
// is never closed; `close` is set to the ')'.
std::optional<std::string_view> Parenthesised(std::string_view s, size_t open, size_t* close) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '(') ++depth;
    if (s[i] == ')' && --depth == 0) {
      *close = i;
      return s.substr(open + 1, i - open - 1);
    }
  }
  return std::nullopt;
}

class Parser {
 public:
  Parser(std::string_view text, int depth) : s_(text), depth_(depth) {}

  std::optional<DimExpr> ParseAll() {
    if (depth_ > DimExpr::kMaxNesting) return std::nullopt;
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
    const bool negate = Eat('-');
    auto acc = Term();
    if (!acc) return std::nullopt;
    if (negate) acc = DimExpr::Sub(DimExpr(), *acc);
    while (acc) {
      const bool plus = Eat('+');
      if (!plus && !Eat('-')) break;
      auto t = Term();
      if (!t) return std::nullopt;
      acc = plus ? DimExpr::Add(*acc, *t) : DimExpr::Sub(*acc, *t);
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
    if (IsIdentStart(c)) {
      const size_t start = pos_;
      while (pos_ < s_.size() && IsIdentChar(s_[pos_])) ++pos_;
      std::string_view name = s_.substr(start, pos_ - start);
      if (name == "min" && Eat('(')) return MinCall();
      return DimExpr::Symbol(std::string(name));
    }
    if (c == '(') {
      size_t close = 0;
      auto inner = Parenthesised(s_, pos_, &close);
      if (!inner || inner->empty()) return std::nullopt;
      pos_ = close + 1;
      if (auto spelled = Parser(*inner, depth_ + 1).ParseAll())
        if (const DimAtom* atom = spelled->single_atom()) return DimExpr::Atom(*atom);
      return DimExpr::Symbol(std::string(*inner));
    }
    return std::nullopt;
  }

  // After "min(": the two arguments and the ')'.
  std::optional<DimExpr> MinCall() {
    if (++depth_ > DimExpr::kMaxNesting) return std::nullopt;
    auto a = Expr();
    if (!a || !Eat(',')) return std::nullopt;
    auto b = Expr();
    if (!b || !Eat(')')) return std::nullopt;
    --depth_;
    return DimExpr::Min(*a, *b);
  }

  std::string_view s_;
  int depth_;
  size_t pos_ = 0;
};

// An atom as a factor: bare when the grammar reads it back as itself.
std::string FactorText(const DimAtom& atom, const std::string& text) {
  return atom.is_identifier() ? text : absl::StrCat("(", text, ")");
}

using Rename = std::function<std::string(const std::string& name)>;

std::string AtomText(const DimAtom& atom, const Rename* rename) {
  if (rename == nullptr) return atom.text();
  if (!atom.is_min()) return (*rename)(atom.text());
  return absl::StrCat("min(", atom.min_first().ToString(*rename), ",", atom.min_second().ToString(*rename), ")");
}

std::string Print(const std::map<DimExpr::Monomial, int64_t>& terms, const Rename* rename) {
  if (terms.empty()) return "0";
  // A lone atom prints as itself so that pass-through dims keep their spelling.
  if (terms.size() == 1 && terms.begin()->second == 1 && terms.begin()->first.size() == 1)
    return AtomText(terms.begin()->first[0], rename);
  std::string out;
  auto append_term = [&](const DimExpr::Monomial& factors, int64_t coefficient) {
    const bool first = out.empty();
    if (coefficient < 0) out += "-";
    else if (!first) out += "+";
    const uint64_t magnitude = coefficient < 0 ? 0 - static_cast<uint64_t>(coefficient) : coefficient;
    bool need_star = false;
    if (magnitude != 1 || factors.empty()) {
      absl::StrAppend(&out, magnitude);
      need_star = true;
    }
    for (const DimAtom& f : factors) {
      if (need_star) out += "*";
      out += FactorText(f, AtomText(f, rename));
      need_star = true;
    }
  };
  for (const auto& [factors, coefficient] : terms)
    if (!factors.empty()) append_term(factors, coefficient);
  auto constant = terms.find(DimExpr::Monomial{});
  if (constant != terms.end()) append_term(constant->first, constant->second);
  return out;
}

}  // namespace

bool IsIdentifier(std::string_view s) {
  if (s.empty() || !IsIdentStart(s[0])) return false;
  return std::all_of(s.begin(), s.end(), IsIdentChar);
}

// ---- DimAtom ----

DimAtom DimAtom::Named(std::string name) {
  DimAtom a;
  a.text_ = std::move(name);
  return a;
}

bool DimAtom::is_identifier() const { return !is_min() && IsIdentifier(text_); }

const DimExpr& DimAtom::min_first() const { return min_->first; }
const DimExpr& DimAtom::min_second() const { return min_->second; }

bool DimAtom::operator==(const DimAtom& other) const {
  if (text_ != other.text_ || is_min() != other.is_min()) return false;
  return !is_min() || min_ == other.min_ || (min_->first == other.min_->first && min_->second == other.min_->second);
}

bool DimAtom::operator<(const DimAtom& other) const {
  // By text first: the canonical order of terms is that of their spellings.
  if (text_ != other.text_) return text_ < other.text_;
  if (is_min() != other.is_min()) return !is_min();
  if (!is_min() || min_ == other.min_) return false;
  if (!(min_->first == other.min_->first)) return min_->first < other.min_->first;
  return min_->second < other.min_->second;
}

// ---- DimExpr ----

DimExpr DimExpr::Constant(int64_t value) {
  DimExpr e;
  if (value != 0) e.terms_[{}] = value;
  return e;
}

DimExpr DimExpr::Atom(DimAtom atom) {
  DimExpr e;
  e.terms_[{std::move(atom)}] = 1;
  return e;
}

DimExpr DimExpr::Min(const DimExpr& a, const DimExpr& b) {
  if (a.is_constant() && b.is_constant()) return Constant(std::min(a.constant_value(), b.constant_value()));
  if (a == b) return a;
  // Every atom is a dim or a minimum of dims, so never negative: when one
  // argument exceeds the other by a polynomial with no negative coefficient
  // (min(seq, past+seq)), the other is the minimum.
  if (auto d = Sub(b, a); d && d->IsNonNegative()) return a;
  if (auto d = Sub(a, b); d && d->IsNonNegative()) return b;
  std::string x = a.ToString(), y = b.ToString();
  const bool swap = y < x;
  if (swap) std::swap(x, y);
  std::string text = absl::StrCat("min(", x, ",", y, ")");
  const int nesting = 1 + std::max(a.nesting(), b.nesting());
  if (nesting > kMaxNesting) return Symbol(std::move(text));
  DimAtom atom;
  atom.text_ = std::move(text);
  atom.min_ = std::make_shared<const DimMinArguments>(swap ? DimMinArguments{b, a} : DimMinArguments{a, b});
  atom.nesting_ = nesting;
  return Atom(std::move(atom));
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

const DimAtom* DimExpr::single_atom() const {
  if (terms_.size() != 1 || terms_.begin()->second != 1 || terms_.begin()->first.size() != 1) return nullptr;
  return &terms_.begin()->first[0];
}

int DimExpr::nesting() const {
  int deepest = 0;
  for (const auto& [factors, coefficient] : terms_)
    for (const DimAtom& a : factors) deepest = std::max(deepest, a.nesting());
  return deepest;
}

std::string DimExpr::ToString() const { return Print(terms_, nullptr); }

std::string DimExpr::ToString(const Rename& rename) const { return Print(terms_, &rename); }

std::optional<int64_t> DimExpr::Evaluate(
    const std::function<std::optional<int64_t>(const std::string& text)>& lookup) const {
  auto atom_value = [&](const DimAtom& atom) -> std::optional<int64_t> {
    if (auto v = lookup(atom.text())) return v;
    if (!atom.is_min()) return std::nullopt;
    auto a = atom.min_first().Evaluate(lookup);
    auto b = atom.min_second().Evaluate(lookup);
    if (!a || !b) return std::nullopt;
    return std::min(*a, *b);
  };
  int64_t total = 0;
  for (const auto& [factors, coefficient] : terms_) {
    int64_t term = coefficient;
    for (const DimAtom& f : factors) {
      auto v = atom_value(f);
      if (!v || __builtin_mul_overflow(term, *v, &term)) return std::nullopt;
    }
    if (__builtin_add_overflow(total, term, &total)) return std::nullopt;
  }
  return total;
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
    // INT64_MIN / -1 overflows (and so does its remainder).
    if ((coefficient == INT64_MIN && bc == -1) || coefficient % bc != 0) return std::nullopt;
    if (!std::includes(factors.begin(), factors.end(), bf.begin(), bf.end())) return std::nullopt;
    Monomial rest;
    std::set_difference(factors.begin(), factors.end(), bf.begin(), bf.end(), std::back_inserter(rest));
    r.terms_[rest] = coefficient / bc;
  }
  return r;
}

std::optional<DimExpr> ParseDimExpr(std::string_view text) { return Parser(text, 0).ParseAll(); }

}  // namespace attune
