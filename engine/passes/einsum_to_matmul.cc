// A two-operand Einsum that is a batched matrix product becomes Transpose +
// MatMul (+ Transpose): "bhqd,bhkd->bhqk" is MatMul(Q, Transpose(K)) and
// "bhqk,bkhd->bqhd" is Transpose(MatMul(P, Transpose(V))), and
// "aecd,abcd->acbe" is MatMul of the second operand by the first transposed, the forms the
// attention fusion and the MatMul kernels know. Libraries that write attention
// with torch.einsum then fuse like the ones that write matmul.
//
// The rewrite is made only when it is the same computation:
//   - an explicit output ("->"): an implicit one sums the repeated letters,
//     which would be the batch letters here;
//   - no ellipsis and no letter twice in one term (a diagonal);
//   - every letter is a batch letter (both operands and the output, in the
//     same order everywhere), the one row letter (first operand and output),
//     the one column letter (second operand and output) or the one contracted
//     letter (both operands, not the output);
//   - each operand's rank is known and equals its term's length, and the two
//     contracted dims are provably equal (Einsum would broadcast a 1 there,
//     MatMul rejects it). Batch dims broadcast alike in both ops.
#include <algorithm>
#include <array>
#include <optional>

#include "engine/passes/passes.h"
#include "ops/matmul/einsum_equation.h"

namespace attune {
namespace {

// Where the letters of a batched product sit: positions in each term.
struct ProductLayout {
  std::vector<int64_t> a_perm;    // a's axes in (batch..., row, contracted) order
  std::vector<int64_t> b_perm;    // b's axes in (batch..., contracted, column) order
  std::vector<int64_t> out_perm;  // output axes read from (batch..., row, column)
  int a_contracted = -1;          // axis of the contracted letter in a
  int b_contracted = -1;          // and in b
};

bool HasRepeatedLetter(const std::string& letters) {
  std::array<bool, 128> seen{};
  for (char c : letters) {
    if (seen[static_cast<unsigned char>(c)]) return true;
    seen[static_cast<unsigned char>(c)] = true;
  }
  return false;
}

int IndexOf(const std::string& letters, char c) {
  const size_t i = letters.find(c);
  return i == std::string::npos ? -1 : static_cast<int>(i);
}

bool IsIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != static_cast<int64_t>(i)) return false;
  return true;
}

// The layout of "a,b->out" as a batched product, or nullopt when it is not one.
std::optional<ProductLayout> BatchedProduct(const std::string& a, const std::string& b, const std::string& out) {
  if (HasRepeatedLetter(a) || HasRepeatedLetter(b) || HasRepeatedLetter(out)) return std::nullopt;
  std::string batch_a, batch_b, batch_out;
  char row = 0, column = 0, contracted = 0;
  int rows = 0, columns = 0, contractions = 0;
  for (char c : a) {
    const bool in_b = IndexOf(b, c) >= 0, in_out = IndexOf(out, c) >= 0;
    if (in_b && in_out) {
      batch_a.push_back(c);
    } else if (in_out) {
      row = c, ++rows;
    } else if (in_b) {
      contracted = c, ++contractions;
    } else {
      return std::nullopt;  // summed over one operand only
    }
  }
  for (char c : b) {
    const bool in_a = IndexOf(a, c) >= 0, in_out = IndexOf(out, c) >= 0;
    if (in_a && in_out) {
      batch_b.push_back(c);
    } else if (in_out) {
      column = c, ++columns;
    } else if (!in_a) {
      return std::nullopt;
    }
  }
  for (char c : out)
    if (IndexOf(batch_a, c) >= 0) batch_out.push_back(c);
  if (rows != 1 || columns != 1 || contractions != 1) return std::nullopt;
  if (batch_a != batch_b || batch_a != batch_out) return std::nullopt;
  // Every output letter is a batch, row or column letter (ParseEinsumEquation
  // checked each is in some input): out has exactly those.
  if (out.size() != batch_a.size() + 2) return std::nullopt;

  ProductLayout layout;
  for (char c : batch_a) layout.a_perm.push_back(IndexOf(a, c));
  layout.a_perm.push_back(IndexOf(a, row));
  layout.a_perm.push_back(IndexOf(a, contracted));
  for (char c : batch_a) layout.b_perm.push_back(IndexOf(b, c));
  layout.b_perm.push_back(IndexOf(b, contracted));
  layout.b_perm.push_back(IndexOf(b, column));
  const std::string product = batch_a + row + column;
  for (char c : out) layout.out_perm.push_back(IndexOf(product, c));
  layout.a_contracted = IndexOf(a, contracted);
  layout.b_contracted = IndexOf(b, contracted);
  return layout;
}

bool HasRank(const Value* v, size_t rank) { return v != nullptr && v->shape() && v->shape()->size() == rank; }

class EinsumToMatMulPass final : public Pass {
 public:
  std::string_view name() const override { return "einsum_to_matmul"; }

  absl::StatusOr<bool> Run(Graph& graph, PassContext&) override {
    bool changed = false;
    for (Node* node : graph.nodes()) {
      if (node->op_type() != "Einsum" || !node->domain().empty() || node->num_inputs() != 2 ||
          node->num_outputs() != 1)
        continue;
      auto text = node->attributes().GetString("equation");
      if (!text.ok()) continue;
      // A malformed equation is the kernel's error to report, not this pass's.
      auto eq = ParseEinsumEquation(*text);
      if (!eq.ok() || !eq->explicit_output || eq->inputs.size() != 2) continue;
      const EinsumTerm& ta = eq->inputs[0];
      const EinsumTerm& tb = eq->inputs[1];
      if (ta.ellipsis_at >= 0 || tb.ellipsis_at >= 0 || eq->output.ellipsis_at >= 0) continue;
      auto layout = BatchedProduct(ta.letters, tb.letters, eq->output.letters);
      if (!layout) continue;
      Value* a = node->input(0);
      Value* b = node->input(1);
      // An output whose column letter comes before its row letter
      // ("aecd,abcd->acbe", tf2onnx's scores) is the product with the
      // operands swapped, which needs no output Transpose.
      if (!IsIdentity(layout->out_perm)) {
        auto swapped = BatchedProduct(tb.letters, ta.letters, eq->output.letters);
        if (swapped && IsIdentity(swapped->out_perm)) {
          if (!HasRank(a, ta.letters.size()) || !HasRank(b, tb.letters.size())) continue;
          if (!((*b->shape())[swapped->a_contracted] == (*a->shape())[swapped->b_contracted])) continue;
          Rewrite(graph, node, b, a, *swapped);
          changed = true;
          continue;
        }
      }
      if (!HasRank(a, ta.letters.size()) || !HasRank(b, tb.letters.size())) continue;
      if (!((*a->shape())[layout->a_contracted] == (*b->shape())[layout->b_contracted])) continue;
      Rewrite(graph, node, a, b, *layout);
      changed = true;
    }
    return changed;
  }

 private:
  static Value* Transposed(Graph& graph, Node* einsum, Value* v, const std::vector<int64_t>& perm,
                           std::string_view tag) {
    if (IsIdentity(perm)) return v;
    const std::string base = einsum->name() + "/" + std::string(tag);
    Value* out = graph.AddValue(base + "_output", v->type());
    Attributes attrs;
    attrs.Set("perm", perm);
    graph.AddNode("Transpose", "", graph.UniqueName(base), {v}, {out}, std::move(attrs));
    return out;
  }

  static void Rewrite(Graph& graph, Node* einsum, Value* a, Value* b, const ProductLayout& layout) {
    Value* lhs = Transposed(graph, einsum, a, layout.a_perm, "transpose_a");
    Value* rhs = Transposed(graph, einsum, b, layout.b_perm, "transpose_b");
    if (IsIdentity(layout.out_perm)) {
      graph.ReplaceNode(einsum, "MatMul", "", {lhs, rhs});
      return;
    }
    const std::string base = einsum->name() + "/matmul";
    Value* product = graph.AddValue(base + "_output", a->type());
    graph.AddNode("MatMul", "", graph.UniqueName(base), {lhs, rhs}, {product});
    Attributes attrs;
    attrs.Set("perm", layout.out_perm);
    graph.ReplaceNode(einsum, "Transpose", "", {product}, std::move(attrs));
  }
};

}  // namespace

std::unique_ptr<Pass> MakeEinsumToMatMulPass() { return std::make_unique<EinsumToMatMulPass>(); }

}  // namespace attune
