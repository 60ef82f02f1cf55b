// Kernel factories of the recurrent family (registered in register.cc): the
// classic RNN layers and the linear-attention recurrence.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ops/kernel.h"

namespace attune {

enum class RnnKind { kRnn, kGru, kLstm };

/// RNN, GRU, LSTM (every opset): one layer in any direction and layout (rnn_layer.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeRnnLayerKernel(const KernelInfo& info, RnnKind kind);

/// LinearAttention (opset 27): linear, gated, delta and gated-delta state updates (linear_attention.cc).
absl::StatusOr<std::unique_ptr<Kernel>> MakeLinearAttentionKernel(const KernelInfo& info);

}  // namespace attune
