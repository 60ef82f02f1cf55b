#!/usr/bin/env python3
"""A LLaMA-style decoder laid out as the onnxruntime-genai model builder writes it
(builder.py: make_attention_mask_reshaping / make_group_query_attention / make_mlp):
input_ids, attention_mask and past_key_values.N.key|value in; logits and
present.N.key|value out; seqlens_k = ReduceSum(attention_mask) - 1 and
total_sequence_length = Shape(attention_mask)[1] as int32; SimplifiedLayerNormalization
then SkipSimplifiedLayerNormalization down the residual; GroupQueryAttention with the
cos/sin caches (do_rotary); SwiGLU as Mul(Sigmoid); random weights.

usage: genai_decoder.py OUT.onnx [--hidden H] [--heads N] [--kv-heads K] [--inter I]
       [--vocab V] [--layers L] [--max-pos M] [--seed S]
With --inputs DIR --batch B --past P --seq S it also writes DIR/*.npy for one run."""
import argparse
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

MS = "com.microsoft"


def build(a):
    rng = np.random.default_rng(a.seed)
    d = a.hidden // a.heads
    inits, nodes = [], []

    def w(name, *shape, scale=None):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name))
        return name

    def c(name, array):
        inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(op, ins, outs, name, domain="", **attrs):
        nodes.append(helper.make_node(op, ins, outs, name=name, domain=domain, **attrs))
        return outs[0]

    inv = 1.0 / (10000 ** (np.arange(0, d, 2) / d))
    ang = np.outer(np.arange(a.max_pos), inv)
    c("cos_cache", np.cos(ang).astype(np.float32))
    c("sin_cache", np.sin(ang).astype(np.float32))
    c("one", np.array([1], np.int64))
    node("ReduceSum", ["attention_mask", "one"], ["mask_sum"], "/model/attn_mask_reformat/attn_mask_subgraph/ReduceSum",
         keepdims=0)
    node("Sub", ["mask_sum", "one"], ["mask_sub"], "/model/attn_mask_reformat/attn_mask_subgraph/Sub")
    node("Cast", ["mask_sub"], ["seqlens_k"], "/model/attn_mask_reformat/attn_mask_subgraph/Sub/Cast",
         to=TensorProto.INT32)
    node("Shape", ["attention_mask"], ["mask_shape"], "/model/attn_mask_reformat/attn_mask_subgraph/Shape")
    node("Gather", ["mask_shape", "one"], ["total_len64"], "/model/attn_mask_reformat/attn_mask_subgraph/Gather", axis=0)
    node("Cast", ["total_len64"], ["total_seq_len"], "/model/attn_mask_reformat/attn_mask_subgraph/Gather/Cast",
         to=TensorProto.INT32)
    x = node("Gather", [w("model.embed_tokens.weight", a.vocab, a.hidden, scale=0.5), "input_ids"], ["embeds"],
             "/model/embed_tokens/Gather")
    norm_in, residual = None, x
    ones = lambda name: c(name, (1.0 + 0.1 * rng.standard_normal(a.hidden)).astype(np.float32))
    for i in range(a.layers):
        p = f"/model/layers.{i}"
        if i == 0:
            h = node("SimplifiedLayerNormalization", [x, ones(f"layers.{i}.input_layernorm.weight")], [f"{p}/in_norm"],
                     f"{p}/input_layernorm/LayerNorm", axis=-1, epsilon=1e-5, stash_type=1)
        else:
            h = norm_in
        q = node("MatMul", [h, w(f"layers.{i}.q_proj", a.hidden, a.hidden)], [f"{p}/q"], f"{p}/attn/q_proj/MatMul")
        k = node("MatMul", [h, w(f"layers.{i}.k_proj", a.hidden, a.kv_heads * d)], [f"{p}/k"], f"{p}/attn/k_proj/MatMul")
        v = node("MatMul", [h, w(f"layers.{i}.v_proj", a.hidden, a.kv_heads * d)], [f"{p}/v"], f"{p}/attn/v_proj/MatMul")
        attn = node("GroupQueryAttention",
                    [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", "seqlens_k", "total_seq_len",
                     "cos_cache", "sin_cache"], [f"{p}/attn_out", f"present.{i}.key", f"present.{i}.value"],
                    f"{p}/attn/GroupQueryAttention", MS, num_heads=a.heads, kv_num_heads=a.kv_heads, do_rotary=1,
                    rotary_interleaved=0, local_window_size=-1, scale=float(1 / np.sqrt(d)))
        o = node("MatMul", [attn, w(f"layers.{i}.o_proj", a.hidden, a.hidden)], [f"{p}/o"], f"{p}/attn/o_proj/MatMul")
        post = node("SkipSimplifiedLayerNormalization", [residual, o, ones(f"layers.{i}.post_attention_layernorm.weight")],
                    [f"{p}/post_norm", "", "", f"{p}/post_residual"], f"{p}/post_attention_layernorm/SkipLayerNorm",
                    MS, epsilon=1e-5)
        residual = f"{p}/post_residual"
        gate = node("MatMul", [post, w(f"layers.{i}.gate_proj", a.hidden, a.inter)], [f"{p}/gate"], f"{p}/mlp/gate_proj/MatMul")
        sig = node("Sigmoid", [gate], [f"{p}/gate_sig"], f"{p}/mlp/act_fn/Sigmoid")
        act = node("Mul", [gate, sig], [f"{p}/gate_act"], f"{p}/mlp/act_fn/Mul")
        up = node("MatMul", [post, w(f"layers.{i}.up_proj", a.hidden, a.inter)], [f"{p}/up"], f"{p}/mlp/up_proj/MatMul")
        prod = node("Mul", [act, up], [f"{p}/mlp_prod"], f"{p}/mlp/Mul")
        down = node("MatMul", [prod, w(f"layers.{i}.down_proj", a.inter, a.hidden)], [f"{p}/down"],
                    f"{p}/mlp/down_proj/MatMul")
        last = i == a.layers - 1
        name = "/model/norm/SkipLayerNorm" if last else f"/model/layers.{i + 1}/input_layernorm/SkipLayerNorm"
        weight = ones("model.norm.weight" if last else f"layers.{i + 1}.input_layernorm.weight")
        norm_in = node("SkipSimplifiedLayerNormalization", [residual, down, weight],
                       [f"{p}/next_norm", "", "", f"{p}/next_residual"], name, MS, epsilon=1e-5)
        residual = f"{p}/next_residual"
    node("MatMul", [norm_in, w("lm_head.weight", a.hidden, a.vocab)], ["logits"], "/lm_head/MatMul")
    F = TensorProto.FLOAT
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", F, ["batch_size", "sequence_length", a.vocab])]
    for i in range(a.layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", F,
                                                        ["batch_size", a.kv_heads, "past_sequence_length", d]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", F,
                                                         ["batch_size", a.kv_heads, "total_sequence_length", d]))
    graph = helper.make_graph(nodes, "genai_decoder", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid(MS, 1)])
    model.ir_version = 10
    return model, d


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    for name, default in (("hidden", 64), ("heads", 4), ("kv-heads", 2), ("inter", 128), ("vocab", 100), ("layers", 2),
                          ("max-pos", 128), ("seed", 7), ("batch", 1), ("past", 0), ("seq", 4)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--inputs")
    a = ap.parse_args()
    model, d = build(a)
    large = sum(t.ByteSize() for t in model.graph.initializer) > (1 << 30)
    save(model, a.out, save_as_external_data=large, location=os.path.basename(a.out) + ".data" if large else None)
    if a.inputs:
        os.makedirs(a.inputs, exist_ok=True)
        rng = np.random.default_rng(a.seed + 1)
        np.save(os.path.join(a.inputs, "input_ids.npy"), rng.integers(0, a.vocab, (a.batch, a.seq)).astype(np.int64))
        np.save(os.path.join(a.inputs, "attention_mask.npy"), np.ones((a.batch, a.past + a.seq), np.int64))
        for i in range(a.layers):
            for kind in ("key", "value"):
                np.save(os.path.join(a.inputs, f"past_key_values.{i}.{kind}.npy"),
                        rng.standard_normal((a.batch, a.kv_heads, a.past, d)).astype(np.float32))


if __name__ == "__main__":
    main()
