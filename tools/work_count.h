// What one run of a session computes and reads, counted at the shapes it ran
// with: the FLOPs of its matrix products and the bytes of weights it read.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "engine/session_impl.h"

namespace attune::cli {

struct RunWork {
  /// 2·M·N·K per MatMul, FusedMatMul, Gemm and FusedGemm (batched products counted per
  /// batch); 2 products per output element and kernel tap per Conv (per input element for
  /// ConvTranspose); 2·B·Tq·Tk·(Hq·D + Hq·Dv) per MultiHeadAttention and ONNX
  /// Attention, Tk including the past. Every key counts: no reduction for a
  /// causal or window mask, so a fused graph and the unfused one (whose
  /// Q·Kᵀ and P·V are MatMuls) count the same work.
  double flop = 0;
  /// Bytes of floating-point constants (initializers and folded constants)
  /// the nodes read, each counted once; a table read through Gather counts
  /// only the bytes gathered.
  double weight_bytes = 0;
  /// Product and convolution nodes whose FLOPs were counted.
  int64_t matmul_nodes = 0;
  int64_t attention_nodes = 0;
};

/// Runs the session once on `inputs` and counts its work.
absl::StatusOr<RunWork> CountRunWork(const SessionImpl& session, const NamedTensors& inputs);

/// The fused attention ops the session's fusion report lists (not undone by verify mode).
int64_t FusedAttentionCount(const SessionImpl& session);

}  // namespace attune::cli
