#include "core/validate/op_arity.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/common/strings.h"
#include "core/schema/multi_head_attention.h"

namespace attune {
namespace {

using Entries = std::vector<OpArity>;  // ascending since_opset

constexpr int kMany = kVariadic;

class ArityTable {
 public:
  ArityTable() {
    // Elementwise.
    for (const char* op : {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Equal", "Less", "Greater", "LessOrEqual",
                           "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
                           "PRelu", "CastLike"})
      Add(op, {{1, 2, 2, 1, 1}});
    for (const char* op : {"Min", "Max", "Sum", "Mean"}) Add(op, {{1, 1, kMany, 1, 1}});
    for (const char* op :
         {"Not", "BitwiseNot", "Abs", "Neg", "Sign", "Reciprocal", "Sqrt", "Exp", "Log", "Erf", "Floor", "Ceil",
          "Round", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "IsNaN",
          "IsInf", "Relu", "LeakyRelu", "Sigmoid", "Tanh", "Gelu", "Softplus", "Softsign", "HardSigmoid", "HardSwish",
          "Elu", "Selu", "Celu", "Mish", "ThresholdedRelu", "Swish", "Cast"})
      Add(op, {{1, 1, 1, 1, 1}});
    Add("Clip", {{1, 1, 1, 1, 1}, {11, 1, 3, 1, 1}});
    Add("Where", {{1, 3, 3, 1, 1}});
    // MatMul family, Conv and norms.
    Add("MatMul", {{1, 2, 2, 1, 1}});
    Add("Gemm", {{1, 3, 3, 1, 1}, {11, 2, 3, 1, 1}});
    Add("Einsum", {{1, 1, kMany, 1, 1}});
    Add("LayerNormalization", {{1, 2, 3, 1, 3}});
    Add("RMSNormalization", {{1, 2, 2, 1, 1}});
    Add("Conv", {{1, 2, 3, 1, 1}});
    Add("FusedConv", {{1, 2, 4, 1, 1}}, "attune");  // X, W, B, Z (ops/conv/conv_epilogue.h)
    // Quantization: x, scale (, zero point); A, B (, zero points); the QLinear form's eight inputs.
    for (const char* op : {"QuantizeLinear", "DequantizeLinear"}) Add(op, {{1, 2, 3, 1, 1}});
    Add("DynamicQuantizeLinear", {{1, 1, 1, 3, 3}});
    Add("MatMulInteger", {{1, 2, 4, 1, 1}});
    Add("QLinearMatMul", {{1, 8, 8, 1, 1}});
    Add("MatMulIntegerToFloat", {{1, 4, 7, 1, 1}}, "com.microsoft");
    Add("DynamicQuantizeMatMul", {{1, 3, 5, 1, 1}}, "com.microsoft");
    Add("DynamicQuantizeMatMul", {{1, 3, 5, 1, 1}}, "attune");
    // Reductions: axes moved from an attribute to an optional input.
    Add("ReduceSum", {{1, 1, 1, 1, 1}, {13, 1, 2, 1, 1}});
    for (const char* op : {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                           "ReduceSumSquare", "ReduceLogSum", "ReduceLogSumExp"})
      Add(op, {{1, 1, 1, 1, 1}, {18, 1, 2, 1, 1}});
    for (const char* op : {"Softmax", "LogSoftmax", "ArgMax", "ArgMin"}) Add(op, {{1, 1, 1, 1, 1}});
    Add("CumSum", {{1, 2, 2, 1, 1}});
    // Shape ops.
    Add("Reshape", {{1, 1, 1, 1, 1}, {5, 2, 2, 1, 1}});
    for (const char* op : {"Flatten", "Identity", "Transpose", "Shape", "Size", "ConstantOfShape"})
      Add(op, {{1, 1, 1, 1, 1}});
    Add("Squeeze", {{1, 1, 1, 1, 1}, {13, 1, 2, 1, 1}});
    Add("Unsqueeze", {{1, 1, 1, 1, 1}, {13, 2, 2, 1, 1}});
    Add("Dropout", {{1, 1, 1, 1, 2}, {12, 1, 3, 1, 2}});
    Add("Concat", {{1, 1, kMany, 1, 1}});
    Add("Split", {{1, 1, 2, 1, kMany}, {2, 1, 1, 1, kMany}, {13, 1, 2, 1, kMany}});
    Add("Slice", {{1, 1, 1, 1, 1}, {10, 3, 5, 1, 1}});
    for (const char* op : {"Gather", "GatherElements", "Expand"}) Add(op, {{1, 2, 2, 1, 1}});
    Add("Tile", {{1, 3, 3, 1, 1}, {6, 2, 2, 1, 1}});
    Add("Trilu", {{1, 1, 2, 1, 1}});
    Add("Constant", {{1, 0, 0, 1, 1}});
    Add("Range", {{1, 3, 3, 1, 1}});
    // Scatter ops: data, indices, updates.
    for (const char* op : {"ScatterND", "ScatterElements", "Scatter"}) Add(op, {{1, 3, 3, 1, 1}});
    Add("TensorScatter", {{1, 2, 3, 1, 1}});  // past_cache, update (, write_indices)
    // Attention: Q, K, V, mask, past K, past V (, nonpad_kv_seqlen from 24) -> Y, present K, present V,
    // QK output.
    Add("Attention", {{1, 3, 6, 1, 4}, {24, 3, 7, 1, 4}});
    Add(mha::kOpType, {{1, 3, mha::kNumInputs, 1, mha::kNumOutputs}}, mha::kDomain);
    // A, B (, bias, multiplier) and A, B, C (, multiplier): ops/matmul/product_epilogue.h.
    Add("FusedMatMul", {{1, 2, 4, 1, 1}}, "attune");
    Add("FusedGemm", {{1, 2, 4, 1, 1}}, "attune");
    // X, Skip, Scale (, B) -> Y (, X + Skip).
    Add("SkipLayerNormalization", {{1, 3, 4, 1, 2}}, "attune");
    Add("SkipRMSNormalization", {{1, 3, 3, 1, 2}}, "attune");
    Add("ElementwiseChain", {{1, 1, 16, 1, 1}}, "attune");  // ops/elementwise/elementwise_chain.h
    // CNN ops: pools (MaxPool's Indices from 8), ConvTranspose, norms (BatchNormalization's
    // training outputs: four before 14, two from 14), depth and space.
    Add("MaxPool", {{1, 1, 1, 1, 1}, {8, 1, 1, 1, 2}});
    for (const char* op : {"AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
                           "LpNormalization", "LRN", "DepthToSpace", "SpaceToDepth", "Hardmax", "EyeLike", "NonZero",
                           "HannWindow", "HammingWindow", "BlackmanWindow"})
      Add(op, {{1, 1, 1, 1, 1}});
    Add("ConvTranspose", {{1, 2, 3, 1, 1}});
    Add("BatchNormalization", {{1, 5, 5, 1, 5}, {14, 5, 5, 1, 3}});
    for (const char* op : {"InstanceNormalization", "GroupNormalization"}) Add(op, {{1, 3, 3, 1, 1}});
    // Resizing and padding: Resize-10 (X, scales), -11 (X, roi, scales[, sizes]), -13 all but X optional.
    Add("Resize", {{10, 2, 2, 1, 1}, {11, 3, 4, 1, 1}, {13, 1, 4, 1, 1}});
    Add("Upsample", {{7, 1, 1, 1, 1}, {9, 2, 2, 1, 1}});
    Add("Pad", {{1, 1, 1, 1, 1}, {11, 2, 3, 1, 1}, {18, 2, 4, 1, 1}});
    Add("CenterCropPad", {{1, 2, 2, 1, 1}});
    Add("GridSample", {{1, 2, 2, 1, 1}});
    Add("AffineGrid", {{1, 2, 2, 1, 1}});
    Add("Col2Im", {{1, 3, 3, 1, 1}});
    // Signal: input (, dft_length (, axis from 20)); signal, frame_step (, window, frame_length); the mel inputs.
    Add("DFT", {{1, 1, 2, 1, 1}, {20, 1, 3, 1, 1}});
    Add("STFT", {{1, 2, 4, 1, 1}});
    Add("MelWeightMatrix", {{1, 5, 5, 1, 1}});
    // Selection and indexing; losses.
    Add("TopK", {{1, 1, 1, 2, 2}, {10, 2, 2, 2, 2}});
    Add("OneHot", {{1, 3, 3, 1, 1}});
    for (const char* op : {"Compress", "GatherND", "CumProd"}) Add(op, {{1, 2, 2, 1, 1}});
    Add("Unique", {{1, 1, 1, 1, 4}});
    Add("NonMaxSuppression", {{1, 2, 5, 1, 1}});  // boxes, scores (, max per class, iou, score thresholds)
    Add("NegativeLogLikelihoodLoss", {{1, 2, 3, 1, 1}});
    Add("SoftmaxCrossEntropyLoss", {{1, 2, 3, 1, 2}});
    // Types and the rest: docs/onnx-types.md.
    for (const char* op : {"Det", "BitCast", "MeanVarianceNormalization", "Shrink"}) Add(op, {{1, 1, 1, 1, 1}});
    Add("ReverseSequence", {{1, 2, 2, 1, 1}});
    // input, position_ids, cos_cache, sin_cache (ops/contrib/rotary_embedding*).
    Add("RotaryEmbedding", {{23, 3, 4, 1, 1}});  // X, cos_cache, sin_cache (, position_ids)
    Add("RotaryEmbedding", {{1, 4, 4, 1, 1}}, "com.microsoft");
    // A, B, scales (, zero_points, g_idx, bias): ops/quantized/.
    Add("MatMulNBits", {{1, 3, 6, 1, 1}}, "com.microsoft");
    // A, W (, bias): ops/quantized/half_weight_kernel.cc.
    Add("HalfWeightMatMul", {{1, 2, 3, 1, 1}}, "attune");
    // query, seqlens_k, total_sequence_length (, past_key) -> query (, positions): ops/contrib/gqa_positions.h.
    Add("GroupQueryPositions", {{1, 3, 4, 1, 2}}, "attune");
    // mask, query (, key, past_key's shape) -> mask for attune.MultiHeadAttention: ops/contrib/attention_mask_index.h.
    Add("AttentionMaskIndex", {{1, 2, 4, 1, 1}}, "attune");
    // Recurrences (ops/recurrent/): query, key, value (, past_state, decay, beta) -> output (, present_state);
    // input, weight (, bias, past_state) -> output (, present_state).
    Add("LinearAttention", {{1, 3, 6, 1, 2}});
    Add("CausalConvWithState", {{1, 2, 4, 1, 2}});
    // X, W, R (, B, sequence_lens, initial_h (, initial_c, P)) -> Y, Y_h (, Y_c), every output optional.
    Add("RNN", {{1, 3, 6, 0, 2}});
    Add("GRU", {{1, 3, 6, 2, 2}, {3, 3, 6, 0, 2}});  // GRU-1 requires both outputs
    Add("LSTM", {{1, 3, 8, 0, 3}});
    // Control flow: the op's own inputs (ValidateGraph leaves out the
    // outer-scope values its subgraphs read, core/ir/graph.h).
    Add("If", {{1, 1, 1, 1, kMany}});
    Add("Loop", {{1, 3, kMany, 1, kMany}, {11, 2, kMany, 1, kMany}});
    Add("Scan", {{9, 1, kMany, 1, kMany}});
    // Optimizer steps (ops/training/): R, T, then X, G and the states per tensor.
    for (const char* op : {"Adagrad", "Adam", "Momentum"}) Add(op, {{1, 5, kMany, 2, kMany}}, "ai.onnx.preview.training");
  }

  const OpArity* Find(std::string_view domain, std::string_view op_type, int opset) const {
    auto it = entries_.find(absl::StrCat(Sv(domain), "::", Sv(op_type)));
    if (it == entries_.end()) return nullptr;
    const OpArity* found = nullptr;
    for (const OpArity& e : it->second)
      if (e.since_opset <= opset) found = &e;
    return found;
  }

 private:
  void Add(const char* op, Entries entries, const char* domain = "") {
    entries_[absl::StrCat(domain, "::", op)] = std::move(entries);
  }

  absl::flat_hash_map<std::string, Entries> entries_;
};

}  // namespace

const OpArity* FindOpArity(std::string_view domain, std::string_view op_type, int opset) {
  static const ArityTable* table = new ArityTable();
  if (domain == "ai.onnx") domain = "";
  return table->Find(domain, op_type, opset);
}

}  // namespace attune
