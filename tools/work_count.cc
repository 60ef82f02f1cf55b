#include "tools/work_count.h"

#include <algorithm>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "core/common/status_macros.h"
#include "core/schema/multi_head_attention.h"

namespace attune::cli {
namespace {

bool IsFloating(ElementType type) {
  return type == ElementType::kFloat32 || type == ElementType::kFloat16 || type == ElementType::kBFloat16 ||
         type == ElementType::kFloat64;
}

const Tensor* Input(const NodeTiming& t, size_t i) { return i < t.inputs.size() ? t.inputs[i] : nullptr; }
const Tensor* Output(const NodeTiming& t, size_t i) {
  return i < t.outputs.size() && !t.outputs[i].empty() ? &t.outputs[i] : nullptr;
}

// Y = A·B: 2 · (elements of Y) · K, with K the last dimension of A.
double MatMulFlop(const NodeTiming& t) {
  const Tensor* a = Input(t, 0);
  const Tensor* y = Output(t, 0);
  if (a == nullptr || y == nullptr || a->rank() == 0) return 0;
  return 2.0 * static_cast<double>(y->num_elements()) * static_cast<double>(a->shape().back());
}

// Gemm: A is M×K or K×M and Y is M×N, so 2·M·N·K = 2 · (elements of A) · N
// whatever transA says. The C term is not counted.
double GemmFlop(const NodeTiming& t) {
  const Tensor* a = Input(t, 0);
  const Tensor* y = Output(t, 0);
  if (a == nullptr || y == nullptr || y->rank() != 2) return 0;
  return 2.0 * static_cast<double>(a->num_elements()) * static_cast<double>(y->shape()[1]);
}

// Conv: each output element sums Cin/group · (kernel size) products, which
// is W's element count over its first dim (M, C/group, k1, k2 ...).
// ConvTranspose: each input element is spread over W's elements per input
// channel (W is C, M/group, k1, k2 ...).
double ConvFlop(const NodeTiming& t, bool transpose) {
  const Tensor* x = Input(t, 0);
  const Tensor* w = Input(t, 1);
  const Tensor* y = Output(t, 0);
  if (x == nullptr || w == nullptr || y == nullptr || w->rank() < 3 || w->shape()[0] <= 0) return 0;
  const double per_row = static_cast<double>(w->num_elements()) / static_cast<double>(w->shape()[0]);
  return 2.0 * static_cast<double>(transpose ? x->num_elements() : y->num_elements()) * per_row;
}

// Q, K, V and Y are (B, T, H·D) or (B, H, T, D); past_key (B, Hkv, P, D).
double AttentionFlop(const NodeTiming& t) {
  const Tensor* q = Input(t, mha::kInputQ);
  const Tensor* k = Input(t, mha::kInputK);
  const Tensor* y = Output(t, mha::kOutputY);
  if (q == nullptr || k == nullptr || y == nullptr || q->rank() != k->rank() || q->rank() != y->rank()) return 0;
  double batch, q_len, qk_width, pv_width, kv_len;
  if (q->rank() == 3) {
    batch = q->shape()[0], q_len = q->shape()[1], qk_width = q->shape()[2], pv_width = y->shape()[2];
    kv_len = k->shape()[1];
  } else if (q->rank() == 4) {
    batch = q->shape()[0], q_len = q->shape()[2];
    qk_width = static_cast<double>(q->shape()[1]) * q->shape()[3];
    pv_width = static_cast<double>(y->shape()[1]) * y->shape()[3];
    kv_len = k->shape()[2];
  } else {
    return 0;
  }
  const Tensor* past = Input(t, mha::kInputPastKey);
  if (past != nullptr && past->rank() == 4) kv_len += past->shape()[2];
  return 2.0 * batch * q_len * kv_len * (qk_width + pv_width);
}

}  // namespace

absl::StatusOr<RunWork> CountRunWork(const SessionImpl& session, const NamedTensors& inputs) {
  // Every floating-point constant by the address of its data: a node input
  // there reads that constant (reshaped views share the address).
  absl::flat_hash_map<const void*, size_t> constant_bytes;
  // Constants released to the node that holds them packed (never passed as
  // inputs): per node, by holder, the bytes of the constant as the model has it.
  absl::flat_hash_map<std::string, std::vector<std::pair<const void*, size_t>>> held_bytes;
  for (const Node* node : session.graph().nodes()) {
    for (const Value* in : node->inputs()) {
      if (in == nullptr || !in->is_constant() || !IsFloating(in->type())) continue;
      if (in->constant() != nullptr && in->constant()->byte_size() > 0)
        constant_bytes.try_emplace(in->constant()->raw_data(), in->constant()->byte_size());
      if (in->constant_holder() == nullptr || !in->shape()) continue;
      size_t bytes = ElementSize(in->type());
      for (const Dim& d : *in->shape()) bytes *= d.is_known() ? static_cast<size_t>(d.value()) : 0;
      held_bytes[node->name()].emplace_back(in->constant_holder().get(), bytes);
    }
  }
  absl::flat_hash_map<const void*, size_t> bytes_read;
  RunWork work;
  NodeObserver observer = [&](const NodeTiming& t) {
    const std::string& op = *t.op_type;
    if (op == "MatMul" || op == "FusedMatMul") {
      work.flop += MatMulFlop(t);
      ++work.matmul_nodes;
    } else if (op == "Gemm" || op == "FusedGemm") {
      work.flop += GemmFlop(t);
      ++work.matmul_nodes;
    } else if (op == "Conv" || op == "FusedConv" || op == "ConvTranspose") {
      work.flop += ConvFlop(t, op == "ConvTranspose");
      ++work.matmul_nodes;
    } else if (op == mha::kOpType || op == "Attention") {
      work.flop += AttentionFlop(t);
      ++work.attention_nodes;
    }
    for (size_t i = 0; i < t.inputs.size(); ++i) {
      const Tensor* in = t.inputs[i];
      if (in == nullptr) continue;
      auto it = constant_bytes.find(in->raw_data());
      if (it == constant_bytes.end()) continue;
      size_t bytes = it->second;
      if (op == "Gather" && i == 0 && Output(t, 0) != nullptr) bytes = std::min(bytes, Output(t, 0)->byte_size());
      size_t& read = bytes_read[it->first];
      read = std::max(read, bytes);
    }
    if (auto held = held_bytes.find(*t.node_name); held != held_bytes.end())
      for (const auto& [holder, bytes] : held->second) bytes_read[holder] = bytes;
  };
  RETURN_IF_ERROR(session.Run(inputs, &observer).status());
  for (const auto& [data, bytes] : bytes_read) work.weight_bytes += static_cast<double>(bytes);
  return work;
}

int64_t FusedAttentionCount(const SessionImpl& session) {
  int64_t count = 0;
  for (const FusionRecord& f : session.report().fusions) count += f.op == mha::kOpType && !f.undone;
  return count;
}

}  // namespace attune::cli
