#include "tests/common/torch_export_graphs.h"

#include <cmath>
#include <limits>

namespace attune::testing {
namespace {

Value* ConstantNode(GraphBuilder& b, Tensor t) {
  Attributes a;
  a.Set("value", std::move(t));
  return b.Node("Constant", {}, std::move(a));
}

Value* Unsqueeze0(GraphBuilder& b, Value* scalar) {
  // torch writes a fresh axes initializer for every Unsqueeze.
  return b.Node("Unsqueeze", {scalar, b.Constant("onnx::Unsqueeze", Int64s({0}))});
}

// Concat(Unsqueeze(batch), Unsqueeze(seq), rest...) as torch writes view(B, T, ...).
Value* ViewShape(GraphBuilder& b, Value* batch, Value* seq, std::vector<int64_t> rest) {
  std::vector<Value*> parts = {Unsqueeze0(b, batch), Unsqueeze0(b, seq)};
  for (int64_t r : rest) parts.push_back(ConstantNode(b, Int64s({r})));
  return b.Node("Concat", parts, Attrs({{"axis", int64_t{0}}}));
}

}  // namespace

Tensor PseudoRandom(std::vector<int64_t> shape, uint32_t seed) {
  Tensor t = *Tensor::Create(ElementType::kFloat32, std::move(shape));
  uint32_t state = seed * 2654435761u + 12345u;
  for (float& v : t.values<float>()) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return t;
}

Value* AddTorchMultiHeadAttention(GraphBuilder& b, Value* x, const TorchMhaOptions& o) {
  const int64_t d = o.d_model, h = o.num_heads, hd = o.d_model / o.num_heads;
  const float weight_scale = 1.0f / std::sqrt(static_cast<float>(d));
  auto weight = [&](uint32_t seed) {
    Tensor w = PseudoRandom({d, d}, seed);
    for (float& v : w.values<float>()) v *= weight_scale;
    return b.Constant("onnx::MatMul", w);
  };
  Value* batch = b.Node("Gather", {b.Node("Shape", {x}), ConstantNode(b, Tensor::Scalar<int64_t>(0))},
                        Attrs({{"axis", int64_t{0}}}));
  Value* seq = b.Node("Gather", {b.Node("Shape", {x}), ConstantNode(b, Tensor::Scalar<int64_t>(1))},
                      Attrs({{"axis", int64_t{0}}}));
  Value* q = b.Node("MatMul", {x, weight(1)});
  Value* q_shape = ViewShape(b, batch, seq, {h, hd});
  Value* k_shape = ViewShape(b, batch, seq, {h, hd});
  Value* v_shape = ViewShape(b, batch, seq, {h, hd});
  const auto perm0213 = Attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
  Value* qh = b.Node("Transpose", {b.Node("Reshape", {q, q_shape}, Attrs({{"allowzero", int64_t{0}}}))}, perm0213);
  Value* k4 = b.Node("Reshape", {b.Node("MatMul", {x, weight(2)}), k_shape}, Attrs({{"allowzero", int64_t{0}}}));
  Value* kh = b.Node("Transpose", {k4}, perm0213);
  Value* vh = b.Node("Transpose", {b.Node("Reshape", {b.Node("MatMul", {x, weight(3)}), v_shape},
                                          Attrs({{"allowzero", int64_t{0}}}))},
                     perm0213);
  Value* kt = b.Node("Transpose", {k4}, Attrs({{"perm", std::vector<int64_t>{0, 2, 3, 1}}}));
  Value* scores = b.Node("MatMul", {qh, kt});
  Value* scale;
  if (o.scale_from_shape) {
    Value* last = b.Node("Slice", {b.Node("Shape", {kh}), ConstantNode(b, Int64s({-1})),
                                   ConstantNode(b, Int64s({std::numeric_limits<int64_t>::max()})),
                                   ConstantNode(b, Int64s({0}))});
    Value* dim = b.Node("Squeeze", {last, ConstantNode(b, Int64s({0}))});
    Value* as_float = b.Node("Cast", {dim}, Attrs({{"to", int64_t{1}}}));
    scale = b.Node("Pow", {as_float, ConstantNode(b, Tensor::Scalar<float>(0.5f))});
  } else {
    scale = ConstantNode(b, Tensor::Scalar<float>(std::sqrt(static_cast<float>(hd))));
  }
  Value* scaled = b.Node("Div", {scores, scale});
  if (o.causal) {
    Tensor mask = *Tensor::Create(ElementType::kBool, {o.context_length, o.context_length});
    for (int64_t i = 0; i < o.context_length; ++i)
      for (int64_t j = 0; j < o.context_length; ++j) mask.data<bool>()[i * o.context_length + j] = j > i;
    Value* buffer = b.Constant("mask", mask);
    Value* rows = b.Node("Slice", {buffer, ConstantNode(b, Int64s({0})),
                                   b.Node("Unsqueeze", {seq, ConstantNode(b, Int64s({0}))}),
                                   ConstantNode(b, Int64s({0})), ConstantNode(b, Int64s({1}))});
    Value* square = b.Node("Slice", {rows, ConstantNode(b, Int64s({0})),
                                     b.Node("Unsqueeze", {seq, ConstantNode(b, Int64s({0}))}),
                                     ConstantNode(b, Int64s({1})), ConstantNode(b, Int64s({1}))});
    Value* cond = b.Node("Cast", {square}, Attrs({{"to", int64_t{9}}}));
    scaled = b.Node("Where", {cond, ConstantNode(b, Tensor::Scalar<float>(-std::numeric_limits<float>::infinity())),
                              scaled});
  }
  Value* probs = b.Node("Softmax", {scaled}, Attrs({{"axis", int64_t{-1}}}));
  Value* context = b.Node("Transpose", {b.Node("MatMul", {probs, vh})}, perm0213);
  Value* merged = b.Node("Reshape", {context, ViewShape(b, batch, seq, {d})}, Attrs({{"allowzero", int64_t{0}}}));
  Value* projected = b.Node("MatMul", {merged, weight(4)});
  Tensor bias = PseudoRandom({d}, 5);
  return b.Node("Add", {b.Constant("out_proj.bias", bias), projected});
}

std::unique_ptr<Graph> TorchMultiHeadAttentionGraph(const TorchMhaOptions& options) {
  GraphBuilder b(17);
  Value* x = b.Input("x", ElementType::kFloat32, Dims({"batch", "seq", options.d_model}));
  b.Output(AddTorchMultiHeadAttention(b, x, options));
  return b.Build();
}

}  // namespace attune::testing
