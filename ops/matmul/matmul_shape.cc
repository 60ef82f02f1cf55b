#include "ops/matmul/matmul_shape.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "attune/tensor.h"
#include "core/common/strings.h"

namespace attune {
namespace {

// How a batch dim pairs up: equal in both operands, or broadcast from one side.
enum class BatchKind { kSame, kBroadcastA, kBroadcastB };

BatchKind KindOf(int64_t a, int64_t b) {
  if (a == b) return BatchKind::kSame;
  return a == 1 ? BatchKind::kBroadcastA : BatchKind::kBroadcastB;
}

}  // namespace

int64_t MatMulShape::batch_count() const {
  int64_t count = 1;
  for (int64_t d : out_batch) count *= d;
  return count;
}

absl::StatusOr<MatMulShape> PlanMatMul(std::string_view op, std::span<const int64_t> a_shape,
                                       std::span<const int64_t> b_shape) {
  auto describe = [&] {
    return absl::StrCat("A ", ShapeToString(a_shape), " and B ", ShapeToString(b_shape));
  };
  if (a_shape.empty() || b_shape.empty())
    return absl::InvalidArgumentError(
        absl::StrCat(Sv(op), ": inputs must have rank >= 1, got ", describe()));
  for (int64_t d : a_shape)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": negative dimension in ", describe()));
  for (int64_t d : b_shape)
    if (d < 0) return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": negative dimension in ", describe()));

  // 1-D operands are promoted to a matrix and the promoted dim is dropped from the output.
  const bool a_vector = a_shape.size() == 1;
  const bool b_vector = b_shape.size() == 1;
  std::vector<int64_t> a(a_shape.begin(), a_shape.end()), b(b_shape.begin(), b_shape.end());
  if (a_vector) a.insert(a.begin(), 1);
  if (b_vector) b.push_back(1);

  MatMulShape s;
  s.m = a[a.size() - 2];
  s.k = a.back();
  s.n = b.back();
  if (b[b.size() - 2] != s.k)
    return absl::InvalidArgumentError(absl::StrCat(Sv(op), ": inner dimensions do not match: ", describe(),
                                                   " (A has K=", s.k, ", B has K=", b[b.size() - 2], ")"));

  const size_t a_rank = a.size() - 2, b_rank = b.size() - 2, rank = std::max(a_rank, b_rank);
  std::vector<int64_t> a_batch(rank, 1), b_batch(rank, 1), out_batch(rank);
  std::copy(a.begin(), a.begin() + a_rank, a_batch.begin() + (rank - a_rank));
  std::copy(b.begin(), b.begin() + b_rank, b_batch.begin() + (rank - b_rank));
  for (size_t i = 0; i < rank; ++i) {
    if (a_batch[i] != b_batch[i] && a_batch[i] != 1 && b_batch[i] != 1)
      return absl::InvalidArgumentError(
          absl::StrCat(Sv(op), ": batch dimensions cannot be broadcast: ", describe()));
    out_batch[i] = a_batch[i] == 1 ? b_batch[i] : a_batch[i];
  }

  s.output_shape = out_batch;
  if (!a_vector) s.output_shape.push_back(s.m);
  if (!b_vector) s.output_shape.push_back(s.n);

  // Every batch dim of B is 1: A's rows are contiguous across its batch, so
  // the whole product is one matrix product with more rows.
  if (std::all_of(b_batch.begin(), b_batch.end(), [](int64_t d) { return d == 1; })) {
    for (int64_t d : a_batch) s.m *= d;
    return s;
  }
  // Merge neighbouring batch dims that broadcast the same way; drop dims of 1.
  for (size_t i = 0; i < rank; ++i) {
    if (out_batch[i] == 1) continue;
    const BatchKind kind = KindOf(a_batch[i], b_batch[i]);
    if (!s.out_batch.empty() && KindOf(s.a_batch.back(), s.b_batch.back()) == kind) {
      s.a_batch.back() *= a_batch[i];
      s.b_batch.back() *= b_batch[i];
      s.out_batch.back() *= out_batch[i];
    } else {
      s.a_batch.push_back(a_batch[i]);
      s.b_batch.push_back(b_batch[i]);
      s.out_batch.push_back(out_batch[i]);
    }
  }
  return s;
}

}  // namespace attune
