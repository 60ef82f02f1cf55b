#include "ops/matmul/matmul_reference.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "ops/matmul/element_access.h"

namespace attune {
namespace {

using matmul_internal::AccumulatorOf;
using matmul_internal::Narrow;
using matmul_internal::Widen;

// Element offset of batch `index` (row-major over out_batch) in an operand
// whose batch dims are `dims` (1 where it is broadcast).
int64_t BatchOffset(const std::vector<int64_t>& out_batch, const std::vector<int64_t>& dims, int64_t index,
                    int64_t matrix_size) {
  int64_t offset = 0, stride = matrix_size;
  for (int i = static_cast<int>(out_batch.size()) - 1; i >= 0; --i) {
    const int64_t coord = index % out_batch[i];
    index /= out_batch[i];
    if (dims[i] != 1) offset += coord * stride;
    stride *= dims[i];
  }
  return offset;
}

template <typename T>
void MatMulLoop(const MatMulShape& s, const T* a, const T* b, T* c, int threads, bool trans_a, bool trans_b) {
  using Acc = AccumulatorOf<T>;
  const int64_t m = s.m, n = s.n, k = s.k, batches = s.batch_count();
  // Strides of A(i, kk) and B(kk, j) inside one matrix.
  const int64_t a_row = trans_a ? 1 : k, a_col = trans_a ? m : 1;
  const int64_t b_row = trans_b ? 1 : n, b_col = trans_b ? k : 1;
#pragma omp parallel num_threads(threads)
  {
    std::vector<Acc> acc(n);
#pragma omp for collapse(2) schedule(static)
    for (int64_t batch = 0; batch < batches; ++batch) {
      for (int64_t i = 0; i < m; ++i) {
        const T* a_mat = a + BatchOffset(s.out_batch, s.a_batch, batch, m * k);
        const T* b_mat = b + BatchOffset(s.out_batch, s.b_batch, batch, k * n);
        std::fill(acc.begin(), acc.end(), Acc{});
        for (int64_t kk = 0; kk < k; ++kk) {
          const Acc av = Widen(a_mat[i * a_row + kk * a_col]);
          const T* b_line = b_mat + kk * b_row;
          for (int64_t j = 0; j < n; ++j) acc[j] += av * Widen(b_line[j * b_col]);
        }
        T* c_row = c + (batch * m + i) * n;
        for (int64_t j = 0; j < n; ++j) c_row[j] = Narrow<T>(acc[j]);
      }
    }
  }
}

template <typename T>
void Dispatch(const MatMulShape& s, const Tensor& a, const Tensor& b, Tensor& c, int threads, bool ta, bool tb) {
  MatMulLoop<T>(s, a.data<T>(), b.data<T>(), c.data<T>(), threads, ta, tb);
}

}  // namespace

bool ReferenceMatMulSupports(ElementType type) {
  switch (type) {
    case ElementType::kFloat32:
    case ElementType::kFloat64:
    case ElementType::kFloat16:
    case ElementType::kBFloat16:
    case ElementType::kInt32:
    case ElementType::kInt64:
    case ElementType::kUint32:
    case ElementType::kUint64:
      return true;
    default:
      return false;
  }
}

absl::Status ReferenceMatMul(const MatMulShape& shape, const Tensor& a, const Tensor& b, Tensor& c, int threads,
                             bool trans_a, bool trans_b) {
  if (c.num_elements() == 0) return absl::OkStatus();
  switch (a.type()) {
    case ElementType::kFloat32: Dispatch<float>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kFloat64: Dispatch<double>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kFloat16: Dispatch<Float16>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kBFloat16: Dispatch<BFloat16>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kInt32: Dispatch<int32_t>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kInt64: Dispatch<int64_t>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kUint32: Dispatch<uint32_t>(shape, a, b, c, threads, trans_a, trans_b); break;
    case ElementType::kUint64: Dispatch<uint64_t>(shape, a, b, c, threads, trans_a, trans_b); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("matrix product of element type ", ElementTypeName(a.type()), " is not supported"));
  }
  return absl::OkStatus();
}

}  // namespace attune
