#!/usr/bin/env python3
"""Writes the vendor-op test graphs laid out as ONNX Runtime's transformer
optimizer (fusion_skiplayernorm.py, fusion_embedlayer.py, fusion_fastgelu.py,
fusion_biasgelu.py) and the onnxruntime-genai model builder write them, with
small dims and random inputs: data/<case>/model.onnx and data/<case>/inputs/*.npy.
The expected outputs (data/<case>/expected/*.npy) come from ONNX Runtime:
run make_expected.sh after this. Usage: gen_cases.py [OUT_DIR]"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_ms_attention  # noqa: E402
MS = "com.microsoft"
F = TensorProto.FLOAT
I32 = TensorProto.INT32


def write_case(root, name, nodes, inputs, outputs, feeds, initializers=(), opset=17):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)])
    del model.graph.value_info[:]
    model.ir_version = 10 if opset >= 23 else 8
    d = os.path.join(root, name)
    os.makedirs(os.path.join(d, "inputs"), exist_ok=True)
    save(model, os.path.join(d, "model.onnx"))
    for k, v in feeds.items():
        np.save(os.path.join(d, "inputs", k + ".npy"), v)
    # Cases with an op the lowering pass rewrites: the report must say how.
    lowered = [n for n in nodes if (n.domain == MS and n.op_type != "RotaryEmbedding")
               or n.op_type == "SimplifiedLayerNormalization"]
    if lowered:
        open(os.path.join(d, "LOWERED"), "w").write("\n".join(n.name for n in lowered) + "\n")


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def init(name, array):
    return numpy_helper.from_array(array, name)


def norms(root, rng):
    b, s, h = 2, 4, 8
    x = rng.standard_normal((b, s, h)).astype(np.float32)
    skip = rng.standard_normal((b, s, h)).astype(np.float32)
    gamma = rng.standard_normal(h).astype(np.float32)
    beta = rng.standard_normal(h).astype(np.float32)
    bias = rng.standard_normal(h).astype(np.float32)
    # The optimizer's SkipLayerNormalization with a bias and the residual sum as output 3.
    write_case(root, "skip_layer_norm",
               [helper.make_node("SkipLayerNormalization", ["x", "skip", "gamma", "beta", "bias"],
                                 ["y", "", "", "sum"], name="SkipLayerNorm_1", domain=MS, epsilon=1e-5)],
               [vi("x", F, ["batch", "seq", h]), vi("skip", F, ["batch", "seq", h])],
               [vi("y", F, ["batch", "seq", h]), vi("sum", F, ["batch", "seq", h])],
               {"x": x, "skip": skip}, [init("gamma", gamma), init("beta", beta), init("bias", bias)])
    # A 2-D skip broadcast over the batch, no beta, no bias; the output feeds a MatMul.
    w = rng.standard_normal((h, 3)).astype(np.float32)
    write_case(root, "skip_layer_norm_broadcast",
               [helper.make_node("SkipLayerNormalization", ["x", "skip2", "gamma"], ["n"], name="SkipLayerNorm_2",
                                 domain=MS, epsilon=1e-12),
                helper.make_node("MatMul", ["n", "w"], ["y"], name="MatMul_1")],
               [vi("x", F, ["batch", s, h]), vi("skip2", F, [s, h])], [vi("y", F, ["batch", s, 3])],
               {"x": x, "skip2": skip[0]}, [init("gamma", gamma), init("w", w)])
    # The genai builder's pre-norm residual chain: SimplifiedLayerNormalization (default
    # domain) on the embeddings, then SkipSimplifiedLayerNormalization whose output 3 is the
    # next residual.
    write_case(root, "skip_simplified_layer_norm",
               [helper.make_node("SimplifiedLayerNormalization", ["x", "gamma"], ["n0"],
                                 name="/model/layers.0/input_layernorm/LayerNorm", axis=-1, epsilon=1e-6, stash_type=1),
                helper.make_node("MatMul", ["n0", "w"], ["attn"], name="/model/layers.0/attn/MatMul"),
                helper.make_node("SkipSimplifiedLayerNormalization", ["attn", "x", "gamma2"], ["y", "", "", "residual"],
                                 name="/model/layers.0/post_attention_layernorm/SkipLayerNorm", domain=MS,
                                 epsilon=1e-6)],
               [vi("x", F, ["batch", "seq", h])], [vi("y", F, ["batch", "seq", h]), vi("residual", F, ["batch", "seq", h])],
               {"x": x}, [init("gamma", gamma), init("gamma2", beta), init("w", rng.standard_normal((h, h)).astype(np.float32))])
    # BERT's embeddings as fusion_embedlayer.py writes them, with a mask and segments.
    vocab, positions = 20, 16
    ids = rng.integers(0, vocab, (b, 5)).astype(np.int32)
    seg = rng.integers(0, 2, (b, 5)).astype(np.int32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=np.int32)
    write_case(root, "embed_layer_norm",
               [helper.make_node("EmbedLayerNormalization",
                                 ["input_ids", "segment_ids", "word", "pos", "segtab", "gamma", "beta", "mask"],
                                 ["y", "mask_index", "embedding_sum"], name="EmbedLayerNormalization_0", domain=MS,
                                 epsilon=1e-12)],
               [vi("input_ids", I32, ["batch", "seq"]), vi("segment_ids", I32, ["batch", "seq"]),
                vi("mask", I32, ["batch", "seq"])],
               [vi("y", F, ["batch", "seq", h]), vi("mask_index", I32, ["batch"]),
                vi("embedding_sum", F, ["batch", "seq", h])],
               {"input_ids": ids, "segment_ids": seg, "mask": mask},
               [init("word", rng.standard_normal((vocab, h)).astype(np.float32)),
                init("pos", rng.standard_normal((positions, h)).astype(np.float32)),
                init("segtab", rng.standard_normal((2, h)).astype(np.float32)),
                init("gamma", gamma), init("beta", beta)])


def activations(root, rng):
    shape = [2, 3, 8]
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.flat[0], x.flat[1], x.flat[2] = 0.0, 30.0, -30.0
    skip = rng.standard_normal(shape).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    nodes = [
        helper.make_node("Gelu", ["x"], ["gelu"], name="Gelu_1", domain=MS),
        helper.make_node("FastGelu", ["x", "bias"], ["fast_gelu_bias"], name="FastGelu_1", domain=MS),
        helper.make_node("FastGelu", ["x"], ["fast_gelu"], name="FastGelu_2", domain=MS),
        helper.make_node("BiasGelu", ["x", "bias"], ["bias_gelu"], name="BiasGelu_1", domain=MS),
        helper.make_node("QuickGelu", ["x"], ["quick_gelu"], name="QuickGelu_1", domain=MS),
        helper.make_node("QuickGelu", ["x"], ["quick_gelu_alpha"], name="QuickGelu_2", domain=MS, alpha=1.5),
    ]
    outs = [vi(n.output[0], F, shape) for n in nodes]
    write_case(root, "activations", nodes, [vi("x", F, shape)], outs, {"x": x}, [init("bias", bias)])
    # ONNX Runtime runs BiasAdd on CUDA only: its reference is numpy, in the
    # kernel's order (x + bias) + skip.
    write_case(root, "bias_add", [helper.make_node("BiasAdd", ["x", "bias", "skip"], ["y"], name="BiasAdd_1", domain=MS)],
               [vi("x", F, shape), vi("skip", F, shape)], [vi("y", F, shape)], {"x": x, "skip": skip},
               [init("bias", bias)])
    d = os.path.join(root, "bias_add", "expected")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "y.npy"), (x + bias) + skip)
    open(os.path.join(root, "bias_add", "REFERENCE"), "w").write("numpy: ONNX Runtime has no CPU kernel for BiasAdd\n")


def fused_matmul(root, rng):
    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    feeds = {"a": r(2, 3, 4, 5), "b": r(2, 3, 5, 6), "at": r(2, 3, 5, 4), "bt": r(2, 3, 6, 5),
             "ab": r(4, 2, 3, 5), "bb": r(6, 2, 3, 5), "a2": r(4, 5), "bt2": r(6, 5)}
    nodes = [
        helper.make_node("FusedMatMul", ["a", "b"], ["plain"], name="FusedMatMul_1", domain=MS, alpha=0.5),
        helper.make_node("FusedMatMul", ["at", "b"], ["trans_a"], name="FusedMatMul_2", domain=MS, transA=1),
        # ORT's optimizer writes Q·Kᵀ with the scale as this form.
        helper.make_node("FusedMatMul", ["a", "bt"], ["trans_b"], name="FusedMatMul_3", domain=MS, transB=1,
                         alpha=0.125),
        helper.make_node("FusedMatMul", ["ab", "b"], ["batch_a"], name="FusedMatMul_4", domain=MS, transBatchA=1),
        helper.make_node("FusedMatMul", ["a", "bb"], ["batch_b"], name="FusedMatMul_5", domain=MS, transBatchB=1,
                         transB=1),
        helper.make_node("FusedMatMul", ["a2", "bt2"], ["two_d"], name="FusedMatMul_6", domain=MS, transB=1,
                         alpha=2.0),
    ]
    shapes = {"plain": [2, 3, 4, 6], "trans_a": [2, 3, 4, 6], "trans_b": [2, 3, 4, 6], "batch_a": [2, 3, 4, 6],
              "batch_b": [2, 3, 4, 6], "two_d": [4, 6]}
    write_case(root, "fused_matmul", nodes, [vi(k, F, list(v.shape)) for k, v in feeds.items()],
               [vi(n.output[0], F, shapes[n.output[0]]) for n in nodes], feeds)


def rotary(root, rng):
    b, s, heads, d, max_pos = 2, 3, 2, 8, 12
    def caches(rot):
        inv = 1.0 / (10000 ** (np.arange(0, rot, 2) / rot))
        ang = np.outer(np.arange(max_pos), inv)
        return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
    cos8, sin8 = caches(d)
    cos4, sin4 = caches(4)
    x4 = rng.standard_normal((b, heads, s, d)).astype(np.float32)
    x3 = rng.standard_normal((b, s, heads * d)).astype(np.float32)
    pos = np.array([[0, 1, 2], [5, 6, 7]], dtype=np.int64)
    # ONNX RotaryEmbedding-23: 4-D with position ids, interleaved; 3-D partial with per-token caches.
    per_token_cos = cos4[pos]
    per_token_sin = sin4[pos]
    write_case(root, "rotary_onnx",
               [helper.make_node("RotaryEmbedding", ["x4", "cos8", "sin8", "pos"], ["y_interleaved"], name="rope_4d",
                                 interleaved=1),
                helper.make_node("RotaryEmbedding", ["x3", "cos_tok", "sin_tok"], ["y_partial"], name="rope_3d",
                                 num_heads=heads, rotary_embedding_dim=4)],
               [vi("x4", F, list(x4.shape)), vi("x3", F, list(x3.shape)), vi("pos", TensorProto.INT64, [b, s]),
                vi("cos_tok", F, list(per_token_cos.shape)), vi("sin_tok", F, list(per_token_sin.shape))],
               [vi("y_interleaved", F, list(x4.shape)), vi("y_partial", F, list(x3.shape))],
               {"x4": x4, "x3": x3, "pos": pos, "cos_tok": per_token_cos, "sin_tok": per_token_sin},
               [init("cos8", cos8), init("sin8", sin8)], opset=23)
    # com.microsoft.RotaryEmbedding (input, position_ids, cos, sin): 3-D halves, a position
    # offset, partial rotary with num_heads, 4-D interleaved.
    offset = np.array([4], dtype=np.int64)
    write_case(root, "rotary_contrib",
               [helper.make_node("RotaryEmbedding", ["x3", "pos", "cos8", "sin8"], ["y_halves"], name="rope_ms_1",
                                 domain=MS),
                helper.make_node("RotaryEmbedding", ["x3", "offset", "cos8", "sin8"], ["y_offset"], name="rope_ms_2",
                                 domain=MS, interleaved=1),
                helper.make_node("RotaryEmbedding", ["x3", "pos", "cos4", "sin4"], ["y_partial"], name="rope_ms_3",
                                 domain=MS, num_heads=heads, rotary_embedding_dim=4),
                helper.make_node("RotaryEmbedding", ["x4", "pos", "cos8", "sin8"], ["y_4d"], name="rope_ms_4",
                                 domain=MS, interleaved=1)],
               [vi("x3", F, list(x3.shape)), vi("x4", F, list(x4.shape)), vi("pos", TensorProto.INT64, [b, s]),
                vi("offset", TensorProto.INT64, [1])],
               [vi("y_halves", F, list(x3.shape)), vi("y_offset", F, list(x3.shape)),
                vi("y_partial", F, list(x3.shape)), vi("y_4d", F, list(x4.shape))],
               {"x3": x3, "x4": x4, "pos": pos, "offset": offset},
               [init("cos8", cos8), init("sin8", sin8), init("cos4", cos4), init("sin4", sin4)])


def onnx_attention(root, rng):
    b, qh, kvh, d = 2, 4, 2, 8
    def r(*shape):
        return rng.standard_normal(shape).astype(np.float32)
    # 4-D GQA decode-like step with a past: causal aligned bottom-right over past + new.
    q, k, v = r(b, qh, 3, d), r(b, kvh, 3, d), r(b, kvh, 3, d)
    pk, pv = r(b, kvh, 5, d), r(b, kvh, 5, d)
    write_case(root, "attention_onnx_4d_past",
               [helper.make_node("Attention", ["q", "k", "v", "", "past_key", "past_value"],
                                 ["y", "present_key", "present_value"], name="attn_past", is_causal=1)],
               [vi("q", F, list(q.shape)), vi("k", F, list(k.shape)), vi("v", F, list(v.shape)),
                vi("past_key", F, list(pk.shape)), vi("past_value", F, list(pv.shape))],
               [vi("y", F, [b, qh, 3, d]), vi("present_key", F, [b, kvh, 8, d]), vi("present_value", F, [b, kvh, 8, d])],
               {"q": q, "k": k, "v": v, "past_key": pk, "past_value": pv}, opset=23)
    # 3-D with q/kv head counts, a bool mask (a row with no visible key), a float mask, softcap and scale.
    t = 4
    q3, k3, v3 = r(b, t, qh * d), r(b, t, kvh * d), r(b, t, kvh * d)
    bool_mask = rng.random((b, 1, t, t)) > 0.4
    bool_mask[0, 0, 1, :] = False
    float_mask = np.where(rng.random((t, t)) > 0.3, 0.0, -np.inf).astype(np.float32)
    float_mask[:, 0] = 0.0
    write_case(root, "attention_onnx_3d_masks",
               [helper.make_node("Attention", ["q3", "k3", "v3", "bool_mask"], ["y_bool"], name="attn_bool",
                                 q_num_heads=qh, kv_num_heads=kvh),
                helper.make_node("Attention", ["q3", "k3", "v3", "float_mask"], ["y_float"], name="attn_float",
                                 q_num_heads=qh, kv_num_heads=kvh, softcap=2.0, scale=0.3)],
               [vi("q3", F, list(q3.shape)), vi("k3", F, list(k3.shape)), vi("v3", F, list(v3.shape)),
                vi("bool_mask", TensorProto.BOOL, list(bool_mask.shape)), vi("float_mask", F, list(float_mask.shape))],
               [vi("y_bool", F, [b, t, qh * d]), vi("y_float", F, [b, t, qh * d])],
               {"q3": q3, "k3": k3, "v3": v3, "bool_mask": bool_mask, "float_mask": float_mask}, opset=23)
    # Opset 24's nonpad_kv_seqlen with a causal query shorter than the keys.
    q2, k6, v6 = r(b, qh, 2, d), r(b, kvh, 6, d), r(b, kvh, 6, d)
    nonpad = np.array([6, 4], dtype=np.int64)
    write_case(root, "attention_onnx_nonpad",
               [helper.make_node("Attention", ["q2", "k6", "v6", "", "", "", "nonpad"], ["y"], name="attn_nonpad",
                                 is_causal=1)],
               [vi("q2", F, list(q2.shape)), vi("k6", F, list(k6.shape)), vi("v6", F, list(v6.shape)),
                vi("nonpad", TensorProto.INT64, [b])],
               [vi("y", F, [b, qh, 2, d])], {"q2": q2, "k6": k6, "v6": v6, "nonpad": nonpad}, opset=24)


def gqa_decoder_layer(root, rng, name, batch, seq, past, mask, heads=4, kv_heads=2, d=16, packed=False, rotary=True,
                      interleaved=0, rotary_half=None, window=-1, softcap=0.0, max_pos=32, head_sink=None,
                      smooth_softmax=0):
    """One attention layer as the genai model builder writes it: seqlens_k and
    total_sequence_length computed from attention_mask (ReduceSum - 1, Shape[1]),
    Q/K/V MatMuls (or one packed MatMul), GroupQueryAttention with the cos/sin caches,
    past_key_values.0.* in and present.0.* out, the output projection. Rows the mask
    pads are zeroed by a Where (GroupQueryAttention leaves them undefined)."""
    hidden = heads * d
    half = rotary_half or d // 2
    inv = 1.0 / (10000 ** (np.arange(0, 2 * half, 2) / (2 * half)))
    ang = np.outer(np.arange(max_pos), inv)
    inits = [init("cos_cache", np.cos(ang).astype(np.float32)), init("sin_cache", np.sin(ang).astype(np.float32)),
             init("one", np.array([1], np.int64)), init("o_proj", (rng.standard_normal((hidden, hidden)) * 0.2).astype(np.float32))]
    nodes = [
        helper.make_node("ReduceSum", ["attention_mask", "one"], ["mask_sum"], name="/model/attn_mask_reformat/ReduceSum", keepdims=0),
        helper.make_node("Sub", ["mask_sum", "one"], ["mask_sub"], name="/model/attn_mask_reformat/Sub"),
        helper.make_node("Cast", ["mask_sub"], ["seqlens_k"], name="/model/attn_mask_reformat/Cast", to=TensorProto.INT32),
        helper.make_node("Shape", ["attention_mask"], ["mask_shape"], name="/model/attn_mask_reformat/Shape"),
        helper.make_node("Gather", ["mask_shape", "one"], ["total_len64"], name="/model/attn_mask_reformat/Gather", axis=0),
        helper.make_node("Cast", ["total_len64"], ["total_seq_len"], name="/model/attn_mask_reformat/Cast_1", to=TensorProto.INT32),
    ]
    if packed:
        w = (rng.standard_normal((hidden, hidden + 2 * kv_heads * d)) * 0.3).astype(np.float32)
        inits.append(init("qkv_proj", w))
        nodes.append(helper.make_node("MatMul", ["x", "qkv_proj"], ["qkv"], name="/model/layers.0/attn/qkv_proj/MatMul"))
        gqa_in = ["qkv", "", ""]
    else:
        for n, cols in (("q", hidden), ("k", kv_heads * d), ("v", kv_heads * d)):
            inits.append(init(n + "_proj", (rng.standard_normal((hidden, cols)) * 0.3).astype(np.float32)))
            nodes.append(helper.make_node("MatMul", ["x", n + "_proj"], [n], name=f"/model/layers.0/attn/{n}_proj/MatMul"))
        gqa_in = ["q", "k", "v"]
    attrs = dict(num_heads=heads, kv_num_heads=kv_heads, do_rotary=int(rotary), rotary_interleaved=interleaved,
                 local_window_size=window)
    if softcap:
        attrs["softcap"] = softcap
    if smooth_softmax:
        attrs["smooth_softmax"] = smooth_softmax
    sink_in = []
    if head_sink is not None:
        inits.append(init("head_sink", np.asarray(head_sink, np.float32)))
        sink_in = ["", "", "head_sink"]
    nodes.append(helper.make_node(
        "GroupQueryAttention", gqa_in + ["past_key_values.0.key", "past_key_values.0.value", "seqlens_k", "total_seq_len",
                                         "cos_cache", "sin_cache"] + sink_in,
        ["attn", "present.0.key", "present.0.value"], name="/model/layers.0/attn/GroupQueryAttention", domain=MS, **attrs))
    nodes += [
        helper.make_node("MatMul", ["attn", "o_proj"], ["proj"], name="/model/layers.0/attn/o_proj/MatMul"),
        helper.make_node("Slice", ["attention_mask", "neg_seq", "big", "one"], ["new_mask"], name="/model/new_tokens/Slice"),
        helper.make_node("Cast", ["new_mask"], ["keep"], name="/model/new_tokens/Cast", to=TensorProto.BOOL),
        helper.make_node("Unsqueeze", ["keep", "two"], ["keep3"], name="/model/new_tokens/Unsqueeze"),
        helper.make_node("Where", ["keep3", "proj", "zero"], ["y"], name="/model/new_tokens/Where"),
    ]
    inits += [init("neg_seq", np.array([-seq], np.int64)), init("big", np.array([1 << 30], np.int64)),
              init("two", np.array([2], np.int64)), init("zero", np.zeros((), np.float32))]
    total = past + seq
    feeds = {"x": rng.standard_normal((batch, seq, hidden)).astype(np.float32), "attention_mask": mask.astype(np.int64),
             "past_key_values.0.key": rng.standard_normal((batch, kv_heads, past, d)).astype(np.float32),
             "past_key_values.0.value": rng.standard_normal((batch, kv_heads, past, d)).astype(np.float32)}
    write_case(root, name, nodes,
               [vi("x", F, ["batch", "seq", hidden]), vi("attention_mask", TensorProto.INT64, ["batch", "total"]),
                vi("past_key_values.0.key", F, ["batch", kv_heads, "past", d]),
                vi("past_key_values.0.value", F, ["batch", kv_heads, "past", d])],
               [vi("y", F, ["batch", "seq", hidden]), vi("present.0.key", F, ["batch", kv_heads, "total", d]),
                vi("present.0.value", F, ["batch", kv_heads, "total", d])], feeds, inits, opset=17)


def gqa(root, rng):
    # A prompt (empty past) of a right-padded batch, rotary halves.
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    gqa_decoder_layer(root, rng, "gqa_prompt_padded", 2, 5, 0, mask)
    # A decode step after 6 tokens: packed QKV, interleaved rotary, a window of 3 and softcap.
    gqa_decoder_layer(root, rng, "gqa_decode_packed_window", 2, 1, 6, np.ones((2, 7)), packed=True, interleaved=1,
                      window=3, softcap=5.0)
    # Several new tokens after a past, partial rotary (16 of 32 dims), 8 query heads on 2 kv heads.
    gqa_decoder_layer(root, rng, "gqa_chunk_partial_rotary", 1, 3, 4, np.ones((1, 7)), heads=8, kv_heads=2, d=32,
                      rotary_half=8)


def gqa_sinks(root, rng):
    # Attention sinks (gpt-oss as the genai builder writes it): a head_sink logit per head, on a
    # right-padded prompt with a window; and smooth_softmax = 1 (a sink of logit 0) on a decode step.
    mask = np.array([[1, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 0, 0]])
    gqa_decoder_layer(root, rng, "gqa_head_sink_window", 2, 7, 0, mask, window=3, head_sink=[0.5, 3.0, -2.0, 1.0])
    gqa_decoder_layer(root, rng, "gqa_smooth_softmax_decode", 2, 1, 6, np.ones((2, 7)), smooth_softmax=1)


def genai_decoders(root):
    """Whole decoders as the genai builder writes them (genai_decoder.py): a prompt and a
    step of three tokens after a past of five."""
    import argparse
    import genai_decoder
    for name, past, seq in (("genai_decoder_prompt", 0, 6), ("genai_decoder_step", 5, 3)):
        a = argparse.Namespace(hidden=128, heads=4, kv_heads=2, inter=192, vocab=100, layers=2, max_pos=64, seed=7)
        model, d = genai_decoder.build(a)
        g = model.graph
        rng = np.random.default_rng(past)
        feeds = {"input_ids": rng.integers(0, 100, (1, seq)).astype(np.int64),
                 "attention_mask": np.ones((1, past + seq), np.int64)}
        for i in range(2):
            for kind in ("key", "value"):
                feeds[f"past_key_values.{i}.{kind}"] = rng.standard_normal((1, 2, past, d)).astype(np.float32)
        write_case(root, name, list(g.node), list(g.input), list(g.output), feeds, list(g.initializer), opset=21)


def bad_cases(root, rng):
    """Malformed files: each fails with the line in its ERROR file (at load, or at the
    first run when only the inputs show the fault)."""
    h = 8
    def bad(name, error, *args, **kwargs):
        write_case(root, name, *args, **kwargs)
        open(os.path.join(root, name, "ERROR"), "w").write(error + "\n")
    x = rng.standard_normal((2, 3, h)).astype(np.float32)
    bad("skip_gamma_size", "node 'sln' (com.microsoft.SkipLayerNormalization): input gamma ('gamma') has 7 entries, the hidden size is 8",
        [helper.make_node("SkipLayerNormalization", ["x", "x", "gamma"], ["y"], name="sln", domain=MS, epsilon=1e-5)],
        [vi("x", F, ["batch", "seq", h])], [vi("y", F, ["batch", "seq", h])], {"x": x},
        [init("gamma", np.ones(7, np.float32))])
    bad("embed_mask_index_type", "node 'emb' (com.microsoft.EmbedLayerNormalization): attribute mask_index_type must be 0 or 1, got 2",
        [helper.make_node("EmbedLayerNormalization", ["ids", "", "word", "pos", "", "gamma", "beta"], ["y", "mask_index"],
                          name="emb", domain=MS, epsilon=1e-5, mask_index_type=2)],
        [vi("ids", I32, [2, 3])], [vi("y", F, [2, 3, h]), vi("mask_index", I32, [2])],
        {"ids": np.zeros((2, 3), np.int32)},
        [init("word", np.ones((4, h), np.float32)), init("pos", np.ones((4, h), np.float32)),
         init("gamma", np.ones(h, np.float32)), init("beta", np.ones(h, np.float32))])
    bad("rotary_heads_divide", "node 'rope' (RotaryEmbedding): RotaryEmbedding node 'rope': hidden size 8 is not a multiple of num_heads 3",
        [helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"], name="rope", num_heads=3)],
        [vi("x", F, [2, 3, h]), vi("pos", TensorProto.INT64, [2, 3])], [vi("y", F, [2, 3, h])],
        {"x": x, "pos": np.zeros((2, 3), np.int64)},
        [init("cos", np.ones((4, 1), np.float32)), init("sin", np.ones((4, 1), np.float32))], opset=23)
    bad("rotary_cache_short", "position 7 (position_ids) is outside cos_cache's 4 rows",
        [helper.make_node("RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], name="rope", domain=MS, num_heads=2)],
        [vi("x", F, [2, 3, h]), vi("pos", TensorProto.INT64, [2, 3])], [vi("y", F, [2, 3, h])],
        {"x": x, "pos": np.array([[0, 1, 2], [7, 8, 9]], np.int64)},
        [init("cos", np.ones((4, 2), np.float32)), init("sin", np.ones((4, 2), np.float32))])
    def gqa_bad(name, error, heads, kv_heads, past_shape, seqlens, total, seq=5, batch=2):
        d = 16
        past = np.zeros(past_shape, np.float32)
        bad(name, error,
            [helper.make_node("GroupQueryAttention", ["q", "k", "v", "pk", "pv", "seqlens_k", "total"],
                              ["y", "present_k", "present_v"], name="gqa", domain=MS, num_heads=heads,
                              kv_num_heads=kv_heads)],
            [vi("q", F, [batch, seq, heads * d]), vi("k", F, [batch, seq, kv_heads * d]),
             vi("v", F, [batch, seq, kv_heads * d]), vi("pk", F, list(past_shape)), vi("pv", F, list(past_shape)),
             vi("seqlens_k", I32, [batch]), vi("total", I32, [])],
            [vi("y", F, [batch, seq, heads * d]), vi("present_k", F, None), vi("present_v", F, None)],
            {"q": np.zeros((batch, seq, heads * d), np.float32), "k": np.zeros((batch, seq, kv_heads * d), np.float32),
             "v": np.zeros((batch, seq, kv_heads * d), np.float32), "pk": past, "pv": past,
             "seqlens_k": np.array(seqlens, np.int32), "total": np.array(total, np.int32)})
    gqa_bad("gqa_heads_divide", "node 'gqa' (com.microsoft.GroupQueryAttention): num_heads 4 is not a multiple of kv_num_heads 3",
            4, 3, (2, 3, 0, 16), [4, 4], 5)
    gqa_bad("gqa_past_heads", "node 'gqa' (com.microsoft.GroupQueryAttention): past_key 'pk' has 3 heads, kv_num_heads is 2",
            4, 2, (2, 3, 0, 16), [4, 4], 5)
    gqa_bad("gqa_seqlens_beyond", "seqlens_k[0] = 9 is beyond the 5 keys of the buffer", 4, 2, (2, 2, 0, 16), [9, 2], 5)
    gqa_bad("gqa_shared_buffer", "total_sequence_length 5 is not past_key's 8 rows + 1 new", 4, 2, (1, 2, 8, 16), [4], 5,
            seq=1, batch=1)
    bad("fused_matmul_attribute", "node 'fm' (com.microsoft.FusedMatMul): attribute beta is not part of the contract",
        [helper.make_node("FusedMatMul", ["x", "w"], ["y"], name="fm", domain=MS, beta=1.0)],
        [vi("x", F, [2, 3, h])], [vi("y", F, [2, 3, 2])], {"x": x}, [init("w", np.ones((h, 2), np.float32))])


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
    rng = np.random.default_rng(39)
    norms(root, rng)
    activations(root, rng)
    fused_matmul(root, rng)
    rotary(root, rng)
    onnx_attention(root, rng)
    gqa(root, rng)
    genai_decoders(root)
    bad_cases(os.path.join(os.path.dirname(root), "data_bad"), rng)
    # Attention and MultiHeadAttention, with a generator of their own.
    gen_ms_attention.generate(root, os.path.join(os.path.dirname(root), "data_bad"), write_case, vi, init)
    gqa_sinks(root, np.random.default_rng(71))  # its own stream: the cases above keep their inputs


if __name__ == "__main__":
    main()
