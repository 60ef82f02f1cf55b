// Shape rules of MatMul (numpy semantics), Gemm and simple Einsum equations.
#include <map>

#include "absl/strings/str_cat.h"
#include "core/common/escape.h"
#include "engine/passes/shape_rules/rules.h"
#include "engine/passes/symbolic_dim.h"

namespace attune::shape_rules {
namespace {

// Numpy matrix product of symbolic shapes a and b (b already as the product reads it).
absl::Status MatMulOfShapes(ShapeContext& ctx, SymbolicShape a, SymbolicShape b) {
  ValueFacts& out = ctx.output(0);
  if (a.empty() || b.empty())
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": MatMul of a scalar"));
  const bool a_vector = a.size() == 1, b_vector = b.size() == 1;
  if (a_vector) a.insert(a.begin(), Dim::Known(1));
  if (b_vector) b.push_back(Dim::Known(1));
  const Dim& k_a = a.back();
  const Dim& k_b = b[b.size() - 2];
  if (k_a.is_known() && k_b.is_known() && k_a.value() != k_b.value())
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": inner dimensions ", k_a.value(), " and ",
                                                   k_b.value(), " differ"));
  auto batch = BroadcastShapes({SymbolicShape(a.begin(), a.end() - 2), SymbolicShape(b.begin(), b.end() - 2)}, ctx);
  if (!batch.ok()) return batch.status();
  SymbolicShape shape = *batch;
  if (!a_vector) shape.push_back(a[a.size() - 2]);
  if (!b_vector) shape.push_back(b.back());
  out.shape = shape;
  return absl::OkStatus();
}

absl::Status MatMulRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  if (!ctx.input(0).shape || !ctx.input(1).shape) return absl::OkStatus();
  return MatMulOfShapes(ctx, *ctx.input(0).shape, *ctx.input(1).shape);
}

// attune.FusedMatMul: B's last two dims swapped when trans_b.
absl::Status FusedMatMulRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  if (!ctx.input(0).shape || !ctx.input(1).shape) return absl::OkStatus();
  auto trans_b = ctx.attrs().GetInt("trans_b", 0);
  if (!trans_b.ok()) return trans_b.status();
  SymbolicShape b = *ctx.input(1).shape;
  if (*trans_b != 0) {
    if (b.size() < 2)
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": trans_b needs B of rank 2 or more"));
    std::swap(b[b.size() - 1], b[b.size() - 2]);
  }
  return MatMulOfShapes(ctx, *ctx.input(0).shape, std::move(b));
}

absl::Status GemmRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  const auto& a = ctx.input(0).shape;
  const auto& b = ctx.input(1).shape;
  if (!a || !b) return absl::OkStatus();
  if (a->size() != 2 || b->size() != 2)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": Gemm inputs must be 2-D"));
  auto trans_a = ctx.attrs().GetInt("transA", 0);
  auto trans_b = ctx.attrs().GetInt("transB", 0);
  if (!trans_a.ok() || !trans_b.ok()) return absl::InvalidArgumentError("bad transA/transB");
  out.shape = SymbolicShape{(*a)[*trans_a ? 1 : 0], (*b)[*trans_b ? 0 : 1]};
  return absl::OkStatus();
}

// Einsum with explicit letters only ("bhqd,bhkd->bhqk"); an ellipsis or an
// implicit output without "->" of repeated letters is left uninferred.
absl::Status EinsumRule(ShapeContext& ctx) {
  ValueFacts& out = ctx.output(0);
  out.type = ctx.input(0).type;
  auto equation = ctx.attrs().GetString("equation");
  if (!equation.ok()) return equation.status();
  std::string eq;
  for (char c : *equation)
    if (c != ' ') eq += c;
  if (eq.find('.') != std::string::npos) return absl::OkStatus();
  const size_t arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (static_cast<int>(terms.size()) != ctx.num_inputs())
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": equation has ", terms.size(),
                                                   " operands for ", ctx.num_inputs(), " inputs"));
  std::map<char, Dim> dims;
  std::map<char, int> counts;
  for (size_t t = 0; t < terms.size(); ++t) {
    const auto& shape = ctx.input(static_cast<int>(t)).shape;
    if (!shape) return absl::OkStatus();
    if (shape->size() != terms[t].size())
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": operand ", t, " has rank ",
                                                     shape->size(), ", equation term ", QuoteName(terms[t])));
    for (size_t i = 0; i < terms[t].size(); ++i) {
      const char c = terms[t][i];
      ++counts[c];
      const Dim& d = (*shape)[i];
      auto it = dims.find(c);
      if (it == dims.end() || (it->second.is_known() && it->second.value() == 1) ||
          (!it->second.is_known() && d.is_known()))
        dims[c] = d;
    }
  }
  std::string output;
  if (arrow != std::string::npos) {
    output = eq.substr(arrow + 2);
  } else {
    for (const auto& [c, n] : counts)
      if (n == 1) output += c;
  }
  SymbolicShape shape;
  for (char c : output) {
    auto it = dims.find(c);
    if (it == dims.end())
      return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": output letter '", std::string(1, c),
                                                     "' is not in any operand"));
    shape.push_back(it->second);
  }
  out.shape = shape;
  return absl::OkStatus();
}

// Det: [..., M, M] -> [...].
absl::Status DetRule(ShapeContext& ctx) {
  ctx.output(0).type = ctx.input(0).type;
  const auto& in = ctx.input(0).shape;
  if (!in) return absl::OkStatus();
  if (in->size() < 2)
    return absl::InvalidArgumentError(absl::StrCat(ctx.node().Describe(), ": input 0 has rank ", in->size(),
                                                   "; expected [..., M, M]"));
  ctx.output(0).shape = SymbolicShape(in->begin(), in->end() - 2);
  return absl::OkStatus();
}

}  // namespace

void AddMatMulRules(RuleTable& table) {
  table.Add("MatMul", MatMulRule);
  table.Add("Gemm", GemmRule);
  table.Add("Einsum", EinsumRule);
  table.Add("Det", DetRule);
  table.Add("FusedMatMul", FusedMatMulRule, "attune");
  table.Add("FusedGemm", GemmRule, "attune");  // Gemm with an epilogue of the output's shape
}

}  // namespace attune::shape_rules
