// The vectorised kernels' table per ISA level, and the threaded entry points.
#include "ops/elementwise/vector_math.h"

#include <algorithm>

#include "ops/common/parallel.h"

namespace attune::elementwise {
namespace {

// Chunks are whole multiples of 16 floats (a cache line), so that no two
// threads write one line and only the last chunk has a tail.
constexpr int64_t kChunkQuantum = 16;
// Elements per thread below which an op stays on one thread: at roughly a
// nanosecond per element or less, smaller chunks do not pay for the team.
constexpr int64_t kVectorOpGrain = int64_t{1} << 14;

template <typename Fn>
void ForEachChunk(int64_t n, int threads, const Fn& fn) {
  const int64_t quanta = (n + kChunkQuantum - 1) / kChunkQuantum;
  ParallelForRange(quanta, kVectorOpGrain / kChunkQuantum, threads, [&](int64_t begin, int64_t end) {
    const int64_t first = begin * kChunkQuantum;
    fn(first, std::min(n, end * kChunkQuantum) - first);
  });
}

}  // namespace

const char* VectorOpName(VectorOp op) {
  switch (op) {
    case VectorOp::kExp: return "Exp";
    case VectorOp::kLog: return "Log";
    case VectorOp::kTanh: return "Tanh";
    case VectorOp::kErf: return "Erf";
    case VectorOp::kSigmoid: return "Sigmoid";
    case VectorOp::kSoftplus: return "Softplus";
    case VectorOp::kGeluErf: return "GeluErf";
    case VectorOp::kGeluTanh: return "GeluTanh";
    case VectorOp::kMish: return "Mish";
    case VectorOp::kHardSwish: return "HardSwish";
  }
  return "?";
}

const VectorMathKernels& VectorMathKernelsFor(Isa isa) {
  switch (isa) {
    case Isa::kAvx512: return vector_math_avx512::Kernels();
    case Isa::kAvx2: return vector_math_avx2::Kernels();
    case Isa::kGeneric: break;
  }
  return vector_math_generic::Kernels();
}

void RunVectorUnary(VectorOp op, const float* x, float* y, int64_t n, int threads) {
  const VectorUnaryFn fn = VectorMathKernelsFor(ActiveIsa()).unary[static_cast<int>(op)];
  ForEachChunk(n, threads, [&](int64_t first, int64_t count) { fn(x + first, y + first, count); });
}

void RunVectorPowInt(const float* x, float* y, int64_t n, int exponent, int threads) {
  const VectorPowIntFn fn = VectorMathKernelsFor(ActiveIsa()).pow_int;
  ForEachChunk(n, threads, [&](int64_t first, int64_t count) { fn(x + first, y + first, count, exponent); });
}

void RunVectorSwish(const float* x, float* y, int64_t n, float alpha, int threads) {
  const VectorSwishFn fn = VectorMathKernelsFor(ActiveIsa()).swish;
  ForEachChunk(n, threads, [&](int64_t first, int64_t count) { fn(x + first, y + first, count, alpha); });
}

}  // namespace attune::elementwise
