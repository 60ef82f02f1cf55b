#include "ops/matmul/einsum_equation.h"

#include <algorithm>
#include <array>

#include "absl/strings/str_cat.h"
#include "attune/tensor.h"
#include "core/common/escape.h"
#include "core/common/strings.h"

namespace attune {
namespace {

int LetterLabel(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : 26 + (c - 'A'); }
bool IsLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

absl::StatusOr<EinsumTerm> ParseTerm(std::string_view text, std::string_view equation) {
  EinsumTerm term;
  for (size_t i = 0; i < text.size();) {
    if (IsLetter(text[i])) {
      term.letters.push_back(text[i]);
      ++i;
    } else if (text.substr(i, 3) == "...") {
      if (term.ellipsis_at >= 0)
        return absl::InvalidArgumentError(
            absl::StrCat("Einsum equation ", QuoteName(equation), ": a term has more than one ellipsis"));
      term.ellipsis_at = static_cast<int>(term.letters.size());
      i += 3;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("Einsum equation ", QuoteName(equation),
                                                     ": unexpected character '", std::string(1, text[i]), "'"));
    }
  }
  return term;
}

// Labels of one operand's dims, with its ellipsis expanded right-aligned into
// the `ellipsis_rank` broadcast dims.
std::vector<int> ExpandTerm(const EinsumTerm& term, int ellipsis_dims, int ellipsis_rank) {
  std::vector<int> labels;
  for (int i = 0; i <= static_cast<int>(term.letters.size()); ++i) {
    if (i == term.ellipsis_at)
      for (int e = 0; e < ellipsis_dims; ++e) labels.push_back(kEinsumEllipsisLabel + ellipsis_rank - ellipsis_dims + e);
    if (i < static_cast<int>(term.letters.size())) labels.push_back(LetterLabel(term.letters[i]));
  }
  return labels;
}

}  // namespace

absl::StatusOr<EinsumEquation> ParseEinsumEquation(std::string_view equation) {
  std::string text;
  for (char c : equation)
    if (c != ' ') text.push_back(c);
  EinsumEquation eq;
  std::string_view lhs = text;
  const size_t arrow = text.find("->");
  if (arrow != std::string::npos) {
    eq.explicit_output = true;
    lhs = std::string_view(text).substr(0, arrow);
    std::string_view rhs = std::string_view(text).substr(arrow + 2);
    if (rhs.find("->") != std::string_view::npos || rhs.find(',') != std::string_view::npos)
      return absl::InvalidArgumentError(absl::StrCat("Einsum equation ", QuoteName(equation), ": malformed output"));
    auto out = ParseTerm(rhs, equation);
    if (!out.ok()) return out.status();
    eq.output = *out;
  }
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    auto term = ParseTerm(lhs.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start),
                          equation);
    if (!term.ok()) return term.status();
    eq.inputs.push_back(*term);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  if (eq.explicit_output) {
    std::array<bool, 52> seen{};
    for (char c : eq.output.letters) {
      const bool in_input = std::any_of(eq.inputs.begin(), eq.inputs.end(), [c](const EinsumTerm& t) {
        return t.letters.find(c) != std::string::npos;
      });
      if (!in_input || seen[LetterLabel(c)])
        return absl::InvalidArgumentError(absl::StrCat("Einsum equation ", QuoteName(equation), ": output label '",
                                                       std::string(1, c),
                                                       in_input ? "' appears twice" : "' is not in any input"));
      seen[LetterLabel(c)] = true;
    }
  }
  return eq;
}

absl::StatusOr<EinsumBinding> BindEinsum(std::string_view op, const EinsumEquation& eq,
                                         const std::vector<std::vector<int64_t>>& shapes) {
  if (shapes.size() != eq.inputs.size())
    return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": the equation has ", eq.inputs.size(),
                                                   " operands but ", shapes.size(), " inputs were given"));
  int ellipsis_rank = 0;
  std::vector<int> ellipsis_dims(shapes.size(), 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const int rank = static_cast<int>(shapes[i].size());
    const int letters = static_cast<int>(eq.inputs[i].letters.size());
    const bool has_ellipsis = eq.inputs[i].ellipsis_at >= 0;
    if (has_ellipsis ? rank < letters : rank != letters)
      return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": input ", i, " has shape ", ShapeToString(shapes[i]),
                                                     " but its term '", eq.inputs[i].letters, "'",
                                                     has_ellipsis ? " with an ellipsis" : "", " names ", letters,
                                                     " dims"));
    ellipsis_dims[i] = has_ellipsis ? rank - letters : 0;
    ellipsis_rank = std::max(ellipsis_rank, ellipsis_dims[i]);
  }

  EinsumBinding b;
  b.label_size.assign(kEinsumEllipsisLabel + ellipsis_rank, -1);
  std::vector<int> count(b.label_size.size(), 0);
  for (size_t i = 0; i < shapes.size(); ++i) {
    b.input_labels.push_back(ExpandTerm(eq.inputs[i], ellipsis_dims[i], ellipsis_rank));
    const std::vector<int>& labels = b.input_labels.back();
    for (size_t d = 0; d < labels.size(); ++d) {
      const int64_t size = shapes[i][d];
      int64_t& known = b.label_size[labels[d]];
      ++count[labels[d]];
      if (known == -1 || known == 1) {
        if (known == -1 || size != 1) known = size;
      } else if (size != known && size != 1) {
        return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": dimension ", d, " of input ", i, " (shape ",
                                                       ShapeToString(shapes[i]), ") has size ", size,
                                                       " but the same label has size ", known, " elsewhere"));
      }
    }
  }
  // Ellipsis dims no operand has (a shorter ellipsis) broadcast as size 1.
  for (int e = 0; e < ellipsis_rank; ++e)
    if (b.label_size[kEinsumEllipsisLabel + e] == -1) b.label_size[kEinsumEllipsisLabel + e] = 1;

  if (eq.explicit_output) {
    if (eq.output.ellipsis_at < 0 && ellipsis_rank > 0)
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(op), ": the inputs' ellipses stand for ", ellipsis_rank,
                       " dims but the output has no ellipsis to hold them"));
    b.output_labels = ExpandTerm(eq.output, eq.output.ellipsis_at >= 0 ? ellipsis_rank : 0, ellipsis_rank);
  } else {
    for (int e = 0; e < ellipsis_rank; ++e) b.output_labels.push_back(kEinsumEllipsisLabel + e);
    // Letters that appear exactly once, in ASCII order (upper case first, as numpy does).
    std::vector<char> once;
    for (int l = 0; l < kEinsumEllipsisLabel; ++l)
      if (count[l] == 1) once.push_back(l < 26 ? static_cast<char>('a' + l) : static_cast<char>('A' + l - 26));
    std::sort(once.begin(), once.end());
    for (char c : once) b.output_labels.push_back(LetterLabel(c));
  }
  for (int l : b.output_labels) b.output_shape.push_back(b.label_size[l]);
  return b;
}

}  // namespace attune
