#include "engine/rewrite/dim_binding.h"

#include <cctype>

namespace attune {
namespace {

bool IsIdentStart(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool IsIdentChar(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// expr := ['-'] term (('+'|'-') term)*   term := factor ('*' factor)*
// factor := integer | identifier | '(' text ')'   (a parenthesised text is one opaque symbol)
class Evaluator {
 public:
  Evaluator(const std::string& text, const std::map<std::string, int64_t>& values) : s_(text), values_(values) {}

  std::optional<int64_t> Run() {
    auto v = Expr();
    Skip();
    if (!v || pos_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void Skip() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool Eat(char c) {
    Skip();
    if (pos_ < s_.size() && s_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  std::optional<int64_t> Expr() {
    const bool negate = Eat('-');
    auto acc = Term();
    if (!acc) return std::nullopt;
    int64_t total = negate ? -*acc : *acc;
    while (true) {
      const bool plus = Eat('+');
      const bool minus = !plus && Eat('-');
      if (!plus && !minus) break;
      auto t = Term();
      if (!t) return std::nullopt;
      if (plus ? __builtin_add_overflow(total, *t, &total) : __builtin_sub_overflow(total, *t, &total))
        return std::nullopt;
    }
    return total;
  }
  std::optional<int64_t> Term() {
    auto acc = Factor();
    while (acc && Eat('*')) {
      auto f = Factor();
      if (!f) return std::nullopt;
      int64_t product;
      if (__builtin_mul_overflow(*acc, *f, &product)) return std::nullopt;
      acc = product;
    }
    return acc;
  }
  std::optional<int64_t> Lookup(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) return std::nullopt;
    return it->second;
  }
  std::optional<int64_t> Factor() {
    Skip();
    if (pos_ >= s_.size()) return std::nullopt;
    const char c = s_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, s_[pos_] - '0', &v)) return std::nullopt;
        ++pos_;
      }
      return v;
    }
    if (IsIdentStart(c)) {
      const size_t start = pos_;
      while (pos_ < s_.size() && IsIdentChar(s_[pos_])) ++pos_;
      return Lookup(s_.substr(start, pos_ - start));
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
      return Lookup(inner);
    }
    return std::nullopt;
  }

  const std::string& s_;
  const std::map<std::string, int64_t>& values_;
  size_t pos_ = 0;
};

}  // namespace

std::optional<int64_t> DimBinding::Evaluate(const Dim& dim) const {
  if (dim.is_known()) return dim.value();
  if (!dim.is_symbol()) return std::nullopt;
  // A symbol bound under its full spelling wins over reading it as an expression.
  auto it = values_.find(dim.symbol());
  if (it != values_.end()) return it->second;
  auto v = Evaluator(dim.symbol(), values_).Run();
  if (!v || *v < 0) return std::nullopt;
  return v;
}

std::optional<std::vector<int64_t>> DimBinding::Evaluate(const std::vector<Dim>& shape) const {
  std::vector<int64_t> out;
  for (const Dim& d : shape) {
    auto v = Evaluate(d);
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

std::set<std::string> SymbolsOf(const Dim& dim) {
  std::set<std::string> out;
  if (!dim.is_symbol()) return out;
  const std::string& s = dim.symbol();
  for (size_t i = 0; i < s.size();) {
    if (s[i] == '(') {
      int depth = 0;
      const size_t start = i + 1;
      for (; i < s.size(); ++i) {
        if (s[i] == '(') ++depth;
        if (s[i] == ')' && --depth == 0) break;
      }
      out.insert(s.substr(start, i - start));
      ++i;
    } else if (IsIdentStart(s[i])) {
      const size_t start = i;
      while (i < s.size() && IsIdentChar(s[i])) ++i;
      out.insert(s.substr(start, i - start));
    } else {
      ++i;
    }
  }
  // A spelling that is not an expression of those identifiers ("seq len") is one opaque symbol.
  std::map<std::string, int64_t> ones;
  for (const std::string& name : out) ones[name] = 1;
  if (out.empty() || !Evaluator(s, ones).Run().has_value()) return {s};
  return out;
}

bool IsPlainSymbol(const Dim& dim) {
  if (!dim.is_symbol()) return false;
  const std::string& s = dim.symbol();
  if (!IsIdentStart(s[0])) return false;
  for (char c : s)
    if (!IsIdentChar(c)) return false;
  return true;
}

}  // namespace attune
