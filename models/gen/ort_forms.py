"""Attention graphs in the forms ONNX Runtime's transformer fusion tests write by hand with onnx.helper
(its bert / gpt2 model generators), rebuilt here from their description:

- bert(): a post-LayerNorm BERT block: Add of two inputs, LayerNormalization (the graph declares opset
  16, below the op's opset 17, as those generators do), Q/K/V MatMul + bias Add, Reshape to
  (0, 0, H, D) and Transpose (0, 2, 1, 3), K transposed (0, 2, 3, 1) straight away, the padding mask
  `(1 - Cast(Unsqueeze(Unsqueeze(mask, 1), 2))) * -10000` added to scores / sqrt(D), Softmax(axis=3),
  context Transpose + Reshape (0, 0, hidden), output projection, residual Add, LayerNormalization.
  Variants: Add operands swapped, pruned heads (Q/K and V widths other than the hidden size, V's head
  size other than Q's), a float mask without the Cast.
- gpt2(): a GPT-2 block: one MatMul + Add to 3·hidden, Split into Q, K, V, heads split as above, the
  past as one (2, B, H, P, D) tensor Split and Squeezed into K and V, Concat on axis -2, present =
  Concat(Unsqueeze(K), Unsqueeze(V)), a uint8 tril buffer sliced [k - q : k, :k] by Shape/Slice/
  Squeeze arithmetic and Cast to bool, Where(mask, scores / sqrt(D), -10000), plus
  `(1 - attention_mask) * -10000` (the mask Reshaped to (B, -1) with a past; Cast from int32 in one
  variant), Softmax(axis=3), Gemm output projection on the flattened rows.
- tf_einsum(): tf2onnx's 3-D BERT attention: Einsum projections "abc,cde->abde", scores
  "aecd,abcd->acbe" (keys first), context "acbe,aecd->abcd", output "abcd,cde->abe", the mask
  Unsqueezed to (B, 1, 1, S) and Sliced with int32 bounds of 1e9.

Weights are random; outputs come from numpy_onnx.evaluate, not from Attune.
"""
import numpy as np
from onnx import TensorProto as TP
from onnx import helper as h
from onnx import numpy_helper as nh


class Weights:
    def __init__(self, seed):
        self.rng = np.random.RandomState(seed)

    def w(self, name, *shape):
        return nh.from_array(self.rng.uniform(-0.5, 0.5, shape).astype(np.float32), name)


def ints(name, values, dtype=np.int64):
    return nh.from_array(np.array(values, dtype=dtype), name)


def floats(name, values):
    return nh.from_array(np.array(values, dtype=np.float32), name)


def ordered(pair, swap):
    return pair[::-1] if swap else pair


def model(nodes, name, inputs, outputs, initializers, opset):
    graph = h.make_graph(nodes, name, inputs, outputs, initializers)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], producer_name="attune-models")


def bert(hidden=16, heads=2, qk_hidden=16, v_hidden=16, float_mask=False, swap=False, opset=16, seed=0):
    wt = Weights(seed)
    dq, dv = qk_hidden // heads, v_hidden // heads
    n = [h.make_node("Add", ["input_1", "input_2"], ["ln_input"], "add_ln"),
         h.make_node("LayerNormalization", ["ln_input", "ln_weight", "ln_bias"], ["ln_out"], "ln", axis=-1,
                     epsilon=1e-5)]
    for x, shape, perm in (("q", "shape_qk", [0, 2, 1, 3]), ("k", "shape_qk", [0, 2, 3, 1]),
                           ("v", "shape_v", [0, 2, 1, 3])):
        n += [h.make_node("MatMul", ["ln_out", f"w_{x}"], [f"matmul_{x}"], f"matmul_{x}"),
              h.make_node("Add", ordered([f"matmul_{x}", f"b_{x}"], swap), [f"add_{x}"], f"add_{x}"),
              h.make_node("Reshape", [f"add_{x}", shape], [f"reshape_{x}"], f"reshape_{x}"),
              h.make_node("Transpose", [f"reshape_{x}"], [f"transpose_{x}"], f"transpose_{x}", perm=perm)]
    n += [h.make_node("Unsqueeze", ["input_mask", "axes_1"], ["mask_1"], "unsqueeze_1"),
          h.make_node("Unsqueeze", ["mask_1", "axes_2"], ["mask_2"], "unsqueeze_2")]
    mask = "mask_2"
    if not float_mask:
        n.append(h.make_node("Cast", ["mask_2"], ["mask_float"], "cast_mask", to=TP.FLOAT))
        mask = "mask_float"
    n += [h.make_node("Sub", ["one", mask], ["mask_inverted"], "sub_mask"),
          h.make_node("Mul", ["mask_inverted", "neg_10000"], ["mask_add"], "mul_mask"),
          h.make_node("MatMul", ["transpose_q", "transpose_k"], ["qk"], "matmul_qk"),
          h.make_node("Div", ["qk", "sqrt_d"], ["qk_scaled"], "div_qk"),
          h.make_node("Add", ordered(["qk_scaled", "mask_add"], swap), ["qk_masked"], "add_qk"),
          h.make_node("Softmax", ["qk_masked"], ["probs"], "softmax", axis=3),
          h.make_node("MatMul", ["probs", "transpose_v"], ["context"], "matmul_qkv"),
          h.make_node("Transpose", ["context"], ["context_t"], "transpose_qkv", perm=[0, 2, 1, 3]),
          h.make_node("Reshape", ["context_t", "shape_out"], ["context_r"], "reshape_qkv"),
          h.make_node("MatMul", ["context_r", "w_o"], ["proj"], "matmul_o"),
          h.make_node("Add", ordered(["proj", "b_o"], swap), ["proj_b"], "add_o"),
          h.make_node("Add", ordered(["proj_b", "ln_out"], swap), ["skip"], "add_skip"),
          h.make_node("LayerNormalization", ["skip", "ln_weight", "ln_bias"], ["output"], "ln_2", axis=-1,
                      epsilon=1e-5)]
    init = [wt.w("ln_weight", hidden), wt.w("ln_bias", hidden), wt.w("w_q", hidden, qk_hidden),
            wt.w("w_k", hidden, qk_hidden), wt.w("w_v", hidden, v_hidden), wt.w("b_q", qk_hidden),
            wt.w("b_k", qk_hidden), wt.w("b_v", v_hidden), wt.w("w_o", v_hidden, hidden), wt.w("b_o", hidden),
            floats("sqrt_d", [np.sqrt(dq)]), floats("one", [1.0]), floats("neg_10000", [-10000.0]),
            ints("shape_qk", [0, 0, heads, dq]), ints("shape_v", [0, 0, heads, dv]),
            ints("shape_out", [0, 0, v_hidden]), ints("axes_1", [1]), ints("axes_2", [2])]
    inputs = [h.make_tensor_value_info("input_1", TP.FLOAT, ["batch", "seq", hidden]),
              h.make_tensor_value_info("input_2", TP.FLOAT, ["batch", "seq", hidden]),
              h.make_tensor_value_info("input_mask", TP.FLOAT if float_mask else TP.INT64, ["batch", "seq"])]
    outputs = [h.make_tensor_value_info("output", TP.FLOAT, ["batch", "seq", hidden])]
    return model(n, "bert_attention", inputs, outputs, init, opset)


def gpt2(hidden=64, heads=4, context=32, past=True, int_mask=False, swap=False, opset=16, seed=0):
    wt = Weights(seed)
    d = hidden // heads
    n = [h.make_node("Add", ["input_1", "input_2"], ["ln_input"], "add_ln"),
         h.make_node("LayerNormalization", ["ln_input", "ln_weight", "ln_bias"], ["ln_out"], "ln", epsilon=1e-5),
         h.make_node("MatMul", ["ln_out", "w_fc"], ["fc_mm"], "matmul_fc"),
         h.make_node("Add", ordered(["fc_mm", "b_fc"], swap), ["fc"], "add_fc"),
         h.make_node("Split", ["fc", "split_qkv"], ["q", "k", "v"], "split_qkv", axis=2)]
    for x in "qkv":
        n += [h.make_node("Reshape", [x, "shape_x"], [f"reshape_{x}"], f"reshape_{x}"),
              h.make_node("Transpose", [f"reshape_{x}"], [f"transpose_{x}"], f"transpose_{x}", perm=[0, 2, 1, 3])]
    keys, values = "transpose_k", "transpose_v"
    if past:
        n += [h.make_node("Split", ["past", "split_kv"], ["past_k2", "past_v2"], "split_past", axis=0),
              h.make_node("Squeeze", ["past_k2", "axes_0"], ["past_k"], "squeeze_k"),
              h.make_node("Squeeze", ["past_v2", "axes_0"], ["past_v"], "squeeze_v"),
              h.make_node("Concat", ["past_k", "transpose_k"], ["keys"], "concat_k", axis=-2),
              h.make_node("Concat", ["past_v", "transpose_v"], ["values"], "concat_v", axis=-2),
              h.make_node("Unsqueeze", ["keys", "axes_0"], ["present_k"], "unsqueeze_k"),
              h.make_node("Unsqueeze", ["values", "axes_0"], ["present_v"], "unsqueeze_v"),
              h.make_node("Concat", ["present_k", "present_v"], ["present"], "concat_present", axis=0)]
        keys, values = "keys", "values"
    n += [h.make_node("Transpose", [keys], ["keys_t"], "transpose_keys", perm=[0, 1, 3, 2]),
          h.make_node("Shape", ["transpose_q"], ["q_shape"], "q_shape"),
          h.make_node("Slice", ["q_shape", "minus_2", "minus_1", "axes_0"], ["q_len1"], "q_len_slice"),
          h.make_node("Squeeze", ["q_len1", "axes_0"], ["q_len"], "q_len_squeeze"),
          h.make_node("Shape", [keys], ["k_shape"], "k_shape"),
          h.make_node("Slice", ["k_shape", "minus_2", "minus_1", "axes_0"], ["k_len1"], "k_len_slice"),
          h.make_node("Squeeze", ["k_len1", "axes_0"], ["k_len"], "k_len_squeeze"),
          h.make_node("Sub", ["k_len", "q_len"], ["offset"], "offset"),
          h.make_node("Unsqueeze", ["offset", "axes_0"], ["offset1"], "offset_unsqueeze"),
          h.make_node("Unsqueeze", ["k_len", "axes_0"], ["k_len_1"], "k_len_unsqueeze"),
          h.make_node("Slice", ["causal_buffer", "offset1", "k_len_1", "axes_2", "ones_1"], ["rows"], "slice_rows"),
          h.make_node("Slice", ["rows", "zeros_1", "k_len_1", "axes_3", "ones_1"], ["causal_u8"], "slice_cols"),
          h.make_node("Cast", ["causal_u8"], ["causal"], "cast_causal", to=TP.BOOL)]
    mask = "attention_mask"
    if past:
        n.append(h.make_node("Reshape", ["attention_mask", "shape_mask"], ["mask_2d"], "reshape_mask"))
        mask = "mask_2d"
    n += [h.make_node("Unsqueeze", [mask, "axes_1"], ["mask_3d"], "unsqueeze_mask_1"),
          h.make_node("Unsqueeze", ["mask_3d", "axes_2"], ["mask_4d"], "unsqueeze_mask_2")]
    mask = "mask_4d"
    if int_mask:
        n.append(h.make_node("Cast", ["mask_4d"], ["mask_float"], "cast_mask", to=TP.FLOAT))
        mask = "mask_float"
    n += [h.make_node("Sub", ["one", mask], ["mask_inverted"], "sub_mask"),
          h.make_node("Mul", ["mask_inverted", "neg_10000"], ["mask_add"], "mul_mask"),
          h.make_node("MatMul", ["transpose_q", "keys_t"], ["qk"], "matmul_qk"),
          h.make_node("Div", ["qk", "sqrt_d"], ["qk_scaled"], "div_qk"),
          h.make_node("Where", ["causal", "qk_scaled", "neg_10000"], ["qk_causal"], "where"),
          h.make_node("Add", ordered(["qk_causal", "mask_add"], swap), ["qk_masked"], "add_mask"),
          h.make_node("Softmax", ["qk_masked"], ["probs"], "softmax", axis=3),
          h.make_node("MatMul", ["probs", values], ["context"], "matmul_qkv"),
          h.make_node("Transpose", ["context"], ["context_t"], "transpose_qkv", perm=[0, 2, 1, 3]),
          h.make_node("Reshape", ["context_t", "shape_out"], ["context_r"], "reshape_qkv"),
          h.make_node("Reshape", ["context_r", "shape_rows"], ["rows_2d"], "flatten_rows"),
          h.make_node("Gemm", ["rows_2d", "w_o", "b_o"], ["proj_2d"], "gemm", alpha=1.0, beta=1.0),
          h.make_node("Shape", ["context_r"], ["out_shape"], "out_shape"),
          h.make_node("Reshape", ["proj_2d", "out_shape"], ["proj"], "unflatten_rows"),
          h.make_node("Add", ordered(["proj", "ln_input"], swap), ["skip"], "add_skip"),
          h.make_node("LayerNormalization", ["skip", "ln_weight", "ln_bias"], ["output"], "ln_2", epsilon=1e-5)]
    init = [wt.w("ln_weight", hidden), wt.w("ln_bias", hidden), wt.w("w_fc", hidden, 3 * hidden),
            wt.w("b_fc", 3 * hidden), wt.w("w_o", hidden, hidden), wt.w("b_o", hidden),
            ints("split_qkv", [hidden] * 3), ints("split_kv", [1, 1]), ints("shape_x", [0, 0, heads, d]),
            ints("shape_out", [0, 0, hidden]), ints("shape_rows", [-1, hidden]), ints("shape_mask", [0, -1]),
            ints("axes_0", [0]), ints("axes_1", [1]), ints("axes_2", [2]), ints("axes_3", [3]),
            ints("minus_2", [-2]), ints("minus_1", [-1]), ints("ones_1", [1]), ints("zeros_1", [0]),
            nh.from_array(np.tril(np.ones((context, context))).reshape(1, 1, context, context).astype(np.uint8),
                          "causal_buffer"),
            floats("sqrt_d", [np.sqrt(d)]), floats("one", [1.0]), floats("neg_10000", [-10000.0])]
    total = "total_seq" if past else "seq"
    inputs = [h.make_tensor_value_info("input_1", TP.FLOAT, ["batch", "seq", hidden]),
              h.make_tensor_value_info("input_2", TP.FLOAT, ["batch", "seq", hidden]),
              h.make_tensor_value_info("attention_mask", TP.INT32 if int_mask else TP.FLOAT, ["batch", total])]
    outputs = [h.make_tensor_value_info("output", TP.FLOAT, ["batch", "seq", hidden])]
    if past:
        inputs.append(h.make_tensor_value_info("past", TP.FLOAT, [2, "batch", heads, "past_seq", d]))
        outputs.append(h.make_tensor_value_info("present", TP.FLOAT, [2, "batch", heads, "total_seq", d]))
    return model(n, "gpt2_attention", inputs, outputs, init, opset)


def tf_einsum(hidden=16, heads=4, head_size=4, opset=13, seed=0):
    wt = Weights(seed)
    n = [h.make_node("Add", ["input_1", "input_2"], ["ln_input"], "add_ln"),
         h.make_node("LayerNormalization", ["ln_input", "ln_weight", "ln_bias"], ["ln_out"], "ln", axis=-1,
                     epsilon=1e-5)]
    for x in "qkv":
        n += [h.make_node("Einsum", ["ln_out", f"w_{x}"], [f"einsum_{x}"], f"einsum_{x}", equation="abc,cde->abde"),
              h.make_node("Add", [f"einsum_{x}", f"b_{x}"], [f"add_{x}"], f"add_{x}")]
    n += [h.make_node("Mul", ["add_q", "q_scale"], ["q_scaled"], "mul_q"),
          h.make_node("Unsqueeze", ["input_mask", "axes_12"], ["mask_4d"], "unsqueeze_mask"),
          h.make_node("Slice", ["mask_4d", "slice_start", "slice_end", "slice_axes", "slice_steps"], ["mask_s"],
                      "slice_mask"),
          h.make_node("Cast", ["mask_s"], ["mask_float"], "cast_mask", to=TP.FLOAT),
          h.make_node("Sub", ["one", "mask_float"], ["mask_inverted"], "sub_mask"),
          h.make_node("Mul", ["mask_inverted", "neg_10000"], ["mask_add"], "mul_mask"),
          h.make_node("Einsum", ["add_k", "q_scaled"], ["scores"], "einsum_qk", equation="aecd,abcd->acbe"),
          h.make_node("Add", ["scores", "mask_add"], ["scores_masked"], "add_qk"),
          h.make_node("Softmax", ["scores_masked"], ["probs"], "softmax", axis=3),
          h.make_node("Einsum", ["probs", "add_v"], ["context"], "einsum_qkv", equation="acbe,aecd->abcd"),
          h.make_node("Einsum", ["context", "w_o"], ["proj"], "einsum_o", equation="abcd,cde->abe"),
          h.make_node("Add", ["proj", "b_o"], ["proj_b"], "add_o"),
          h.make_node("Add", ["proj_b", "ln_out"], ["skip"], "add_skip"),
          h.make_node("LayerNormalization", ["skip", "ln_weight", "ln_bias"], ["output"], "ln_2", axis=-1,
                      epsilon=1e-5)]
    init = [wt.w("ln_weight", hidden), wt.w("ln_bias", hidden), wt.w("w_q", hidden, heads, head_size),
            wt.w("w_k", hidden, heads, head_size), wt.w("w_v", hidden, heads, head_size),
            wt.w("b_q", heads, head_size), wt.w("b_k", heads, head_size), wt.w("b_v", heads, head_size),
            wt.w("w_o", heads, head_size, hidden), wt.w("b_o", hidden), floats("q_scale", [head_size ** -0.5]),
            floats("one", [1.0]), floats("neg_10000", [-10000.0]), ints("axes_12", [1, 2]),
            ints("slice_start", [0, 0, 0, 0], np.int32), ints("slice_end", [1000000000] * 4, np.int32),
            ints("slice_axes", [0, 1, 2, 3], np.int32), ints("slice_steps", [1, 1, 1, 1], np.int32)]
    inputs = [h.make_tensor_value_info("input_1", TP.FLOAT, ["batch", "seq", hidden]),
              h.make_tensor_value_info("input_2", TP.FLOAT, ["batch", "seq", hidden]),
              h.make_tensor_value_info("input_mask", TP.INT64, ["batch", "seq"])]
    outputs = [h.make_tensor_value_info("output", TP.FLOAT, ["batch", "seq", hidden])]
    return model(n, "tf2onnx_attention", inputs, outputs, init, opset)


def bart_sdpa(hidden=16, heads=4, batch=2, seq=8, with_mask=True, opset=18, seed=0):
    """The SDPA attention Hugging Face transformers 4.49+ exports for BART, as ONNX Runtime's BART fusion test
    writes it: static shapes, K transposed through the heads merged into the batch (Reshape to
    (B·H, S, D), Transpose (0, 2, 1), Reshape to (B, H, D, S)), Q and K each multiplied by 1/sqrt(D), a
    bool (B, 1, T, S) mask turned additive by Where(mask, 0, -1e9), and the Where(IsNaN(p), 0, p) guard."""
    wt = Weights(seed)
    d = hidden // heads
    n = [h.make_node("LayerNormalization", ["input_1", "ln_weight", "ln_bias"], ["ln_out"], "ln", axis=-1,
                     epsilon=1e-5)]
    for x in "qkv":
        n += [h.make_node("MatMul", ["ln_out", f"w_{x}"], [f"matmul_{x}"], f"matmul_{x}"),
              h.make_node("Add", [f"matmul_{x}", f"b_{x}"], [f"add_{x}"], f"add_{x}"),
              h.make_node("Reshape", [f"add_{x}", "shape_4d"], [f"reshape_{x}"], f"reshape_{x}"),
              h.make_node("Transpose", [f"reshape_{x}"], [f"transpose_{x}"], f"transpose_{x}", perm=[0, 2, 1, 3])]
    n += [h.make_node("Reshape", ["transpose_k", "shape_k_3d"], ["k_3d"], "k_reshape_3d"),
          h.make_node("Transpose", ["k_3d"], ["k_3d_t"], "k_transpose_3d", perm=[0, 2, 1]),
          h.make_node("Reshape", ["k_3d_t", "shape_kt_4d"], ["k_4d_t"], "k_reshape_4d"),
          h.make_node("Mul", ["transpose_q", "scale"], ["q_scaled"], "q_scale"),
          h.make_node("Mul", ["k_4d_t", "scale"], ["k_scaled"], "k_scale"),
          h.make_node("MatMul", ["q_scaled", "k_scaled"], ["scores"], "matmul_qk")]
    scores = "scores"
    if with_mask:
        n += [h.make_node("Where", ["attention_mask", "zero", "neg_1e9"], ["mask_add"], "mask_where"),
              h.make_node("Add", ["scores", "mask_add"], ["scores_masked"], "add_mask")]
        scores = "scores_masked"
    n += [h.make_node("Softmax", [scores], ["probs"], "softmax", axis=-1),
          h.make_node("IsNaN", ["probs"], ["is_nan"], "isnan"),
          h.make_node("Where", ["is_nan", "zero", "probs"], ["probs_guarded"], "nan_guard"),
          h.make_node("MatMul", ["probs_guarded", "transpose_v"], ["context"], "matmul_qkv"),
          h.make_node("Transpose", ["context"], ["context_t"], "transpose_qkv", perm=[0, 2, 1, 3]),
          h.make_node("Reshape", ["context_t", "shape_out"], ["context_r"], "reshape_qkv"),
          h.make_node("MatMul", ["context_r", "w_o"], ["proj"], "matmul_o"),
          h.make_node("Add", ["proj", "b_o"], ["proj_b"], "add_o"),
          h.make_node("Add", ["ln_out", "proj_b"], ["skip"], "add_skip"),
          h.make_node("LayerNormalization", ["skip", "ln2_weight", "ln2_bias"], ["output"], "ln_2", axis=-1,
                      epsilon=1e-5)]
    init = [wt.w("ln_weight", hidden), wt.w("ln_bias", hidden), wt.w("ln2_weight", hidden), wt.w("ln2_bias", hidden),
            wt.w("w_q", hidden, hidden), wt.w("w_k", hidden, hidden), wt.w("w_v", hidden, hidden),
            wt.w("b_q", hidden), wt.w("b_k", hidden), wt.w("b_v", hidden), wt.w("w_o", hidden, hidden),
            wt.w("b_o", hidden), ints("shape_4d", [batch, seq, heads, d]), ints("shape_k_3d", [batch * heads, seq, d]),
            ints("shape_kt_4d", [batch, heads, d, seq]), ints("shape_out", [batch, seq, hidden]),
            nh.from_array(np.array(d ** -0.5, dtype=np.float32), "scale"),
            nh.from_array(np.array(0.0, dtype=np.float32), "zero"),
            nh.from_array(np.array(-1e9, dtype=np.float32), "neg_1e9")]
    inputs = [h.make_tensor_value_info("input_1", TP.FLOAT, [batch, seq, hidden])]
    if with_mask:
        inputs.append(h.make_tensor_value_info("attention_mask", TP.BOOL, [batch, 1, seq, seq]))
    outputs = [h.make_tensor_value_info("output", TP.FLOAT, [batch, seq, hidden])]
    return model(n, "bart_sdpa_attention", inputs, outputs, init, opset)


def dit(batch=2, seq=4, heads=4, head_dim=8, scale=100.0, k_input=False, opset=17, seed=0):
    """Diffusion-transformer attention (F5-TTS) as ONNX Runtime's DiT fusion test writes it: static shapes,
    Q/K/V MatMul, Reshape (B, S, H, D), Transpose (0, 2, 1, 3), K transposed again to (B, H, D, S) (or given
    so as an input with `k_input`), scores times a custom scale (100), Softmax, P·V, heads merged."""
    wt = Weights(seed)
    hidden = heads * head_dim
    n, init = [], [floats("attn_scale", scale), ints("shape_4d", [batch, seq, heads, head_dim]),
                   ints("shape_out", [batch, seq, hidden])]
    if k_input:
        q, kt, v = "q_bnsh", "k_bnhs", "v_bnsh"
        inputs = [h.make_tensor_value_info("q_bnsh", TP.FLOAT, [batch, heads, seq, head_dim]),
                  h.make_tensor_value_info("k_bnhs", TP.FLOAT, [batch, heads, head_dim, seq]),
                  h.make_tensor_value_info("v_bnsh", TP.FLOAT, [batch, heads, seq, head_dim])]
    else:
        for x in "qkv":
            n += [h.make_node("MatMul", ["input_0", f"w_{x}"], [f"proj_{x}"], f"matmul_{x}"),
                  h.make_node("Reshape", [f"proj_{x}", "shape_4d"], [f"reshape_{x}"], f"reshape_{x}"),
                  h.make_node("Transpose", [f"reshape_{x}"], [f"{x}_bnsh"], f"transpose_{x}", perm=[0, 2, 1, 3])]
            init.append(wt.w(f"w_{x}", hidden, hidden))
        n.append(h.make_node("Transpose", ["k_bnsh"], ["k_bnhs"], "k_pre_transpose", perm=[0, 1, 3, 2]))
        q, kt, v = "q_bnsh", "k_bnhs", "v_bnsh"
        inputs = [h.make_tensor_value_info("input_0", TP.FLOAT, [batch, seq, hidden])]
    n += [h.make_node("MatMul", [q, kt], ["scores"], "matmul_qk"),
          h.make_node("Mul", ["scores", "attn_scale"], ["scores_scaled"], "scale"),
          h.make_node("Softmax", ["scores_scaled"], ["probs"], "softmax", axis=-1),
          h.make_node("MatMul", ["probs", v], ["context"], "matmul_qkv"),
          h.make_node("Transpose", ["context"], ["context_t"], "transpose_qkv", perm=[0, 2, 1, 3]),
          h.make_node("Reshape", ["context_t", "shape_out"], ["output_0" if k_input else "context_r"], "reshape_qkv")]
    if not k_input:
        n.append(h.make_node("MatMul", ["context_r", "w_o"], ["output_0"], "matmul_o"))
        init.append(wt.w("w_o", hidden, hidden))
    outputs = [h.make_tensor_value_info("output_0", TP.FLOAT, [batch, seq, hidden])]
    return model(n, "dit_attention", inputs, outputs, init, opset)
