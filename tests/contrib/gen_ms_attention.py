"""com.microsoft.Attention and MultiHeadAttention test graphs, laid out as ONNX
Runtime's transformer optimizer writes them (fusion_attention.py,
onnx_model_bert.py, fusion_gpt_attention.py, fusion_bart_attention.py):
BERT's EmbedLayerNormalization -> Attention (packed weights, mask_index from
the embedding) -> MatMul -> SkipLayerNormalization; GPT-2's unidirectional
Attention with the combined past/present; every mask_index form; and
MultiHeadAttention in each packing, cross-attention included. Small dims.
Called by gen_cases.py; its write_case writes each case."""
import os

import numpy as np
from onnx import TensorProto, helper, save

MS = "com.microsoft"
F = TensorProto.FLOAT
I32 = TensorProto.INT32


def _r(rng, *shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def bert_layer(root, rng, write_case, vi, init):
    b, s, h, heads, vocab = 2, 5, 16, 2, 20
    ids = rng.integers(0, vocab, (b, s)).astype(np.int32)
    seg = rng.integers(0, 2, (b, s)).astype(np.int32)
    mask = np.array([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], np.int32)
    nodes = [
        helper.make_node("EmbedLayerNormalization", ["input_ids", "segment_ids", "word", "pos", "segtab", "ln0_g",
                                                     "ln0_b", "input_mask"], ["emb", "mask_index"],
                         name="EmbedLayerNormalization_0", domain=MS, epsilon=1e-12),
        helper.make_node("Attention", ["emb", "qkv_w", "qkv_b", "mask_index"], ["attn"], name="Attention_0",
                         domain=MS, num_heads=heads),
        helper.make_node("MatMul", ["attn", "out_w"], ["proj"], name="MatMul_0"),
        helper.make_node("SkipLayerNormalization", ["proj", "emb", "ln1_g", "ln1_b", "out_b"], ["ln1"],
                         name="SkipLayerNorm_0", domain=MS, epsilon=1e-12),
        helper.make_node("MatMul", ["ln1", "ff_w1"], ["ff1"], name="MatMul_1"),
        helper.make_node("FastGelu", ["ff1", "ff_b1"], ["gelu"], name="FastGelu_0", domain=MS),
        helper.make_node("MatMul", ["gelu", "ff_w2"], ["ff2"], name="MatMul_2"),
        helper.make_node("SkipLayerNormalization", ["ff2", "ln1", "ln2_g", "ln2_b", "ff_b2"], ["y"],
                         name="SkipLayerNorm_1", domain=MS, epsilon=1e-12),
    ]
    inits = [init("word", _r(rng, vocab, h)), init("pos", _r(rng, 16, h)), init("segtab", _r(rng, 2, h)),
             init("ln0_g", _r(rng, h)), init("ln0_b", _r(rng, h)), init("qkv_w", _r(rng, h, 3 * h, scale=0.3)),
             init("qkv_b", _r(rng, 3 * h)), init("out_w", _r(rng, h, h, scale=0.3)), init("out_b", _r(rng, h)),
             init("ln1_g", _r(rng, h)), init("ln1_b", _r(rng, h)), init("ff_w1", _r(rng, h, 4 * h, scale=0.3)),
             init("ff_b1", _r(rng, 4 * h)), init("ff_w2", _r(rng, 4 * h, h, scale=0.3)), init("ff_b2", _r(rng, h)),
             init("ln2_g", _r(rng, h)), init("ln2_b", _r(rng, h))]
    write_case(root, "bert_layer_attention", nodes,
               [vi("input_ids", I32, ["batch", "seq"]), vi("segment_ids", I32, ["batch", "seq"]),
                vi("input_mask", I32, ["batch", "seq"])],
               [vi("y", F, ["batch", "seq", h])], {"input_ids": ids, "segment_ids": seg, "input_mask": mask}, inits)


def attention_masks(root, rng, write_case, vi, init):
    """One Attention per mask_index form on the same input, and the attributes."""
    b, s, h, heads = 2, 5, 16, 4
    x = _r(rng, b, s, h)
    w, bias = _r(rng, h, 3 * h, scale=0.4), _r(rng, 3 * h)
    feeds = {"x": x,
             "ends": np.array([3, 0], np.int32),                      # row 1: every key hidden
             "ends_starts": np.array([5, 9, 2, 0], np.int32),         # row 0 left-padded by 2; row 1 ends past T
             "raw2d": np.array([[1, 0, 1, 1, 0], [1, 1, 1, 1, 1]], np.int32),
             "raw3d": rng.integers(0, 2, (b, s, s)).astype(np.int32),
             "bias4d": _r(rng, 1, heads, s, s)}
    feeds["raw3d"][:, :, 0] = 1
    specs = [  # output, mask input, attention_bias, attributes
        ("y_ends", "ends", "", {}),
        ("y_ends_causal", "ends", "", {"unidirectional": 1}),
        ("y_ends_starts_causal", "ends_starts", "", {"unidirectional": 1}),
        ("y_raw2d", "raw2d", "", {"mask_filter_value": -1000.0}),
        ("y_raw2d_bias", "raw2d", "bias4d", {"scale": 0.3}),
        ("y_raw3d", "raw3d", "", {"unidirectional": 1}),
        ("y_raw3d_bias", "raw3d", "bias4d", {}),
        ("y_bias_only", "", "bias4d", {"unidirectional": 1}),
        ("y_plain", "", "", {}),
    ]
    nodes, outs = [], []
    for i, (out, mask, abias, attrs) in enumerate(specs):
        ins = ["x", "w", "b", mask, "", abias] if abias else ["x", "w", "b", mask]
        nodes.append(helper.make_node("Attention", ins, [out], name=f"Attention_{i}", domain=MS, num_heads=heads,
                                      **attrs))
        outs.append(vi(out, F, [b, s, h]))
    # qkv_hidden_sizes: V narrower than Q and K.
    w2 = _r(rng, h, 16 + 16 + 8, scale=0.4)
    nodes.append(helper.make_node("Attention", ["x", "w2", "b2", "raw2d"], ["y_sizes"], name="Attention_sizes",
                                  domain=MS, num_heads=heads, qkv_hidden_sizes=[16, 16, 8]))
    outs.append(vi("y_sizes", F, [b, s, 8]))
    write_case(root, "attention_mask_forms", nodes,
               [vi("x", F, [b, s, h]), vi("ends", I32, [b]), vi("ends_starts", I32, [2 * b]),
                vi("raw2d", I32, [b, s]), vi("raw3d", I32, [b, s, s]), vi("bias4d", F, [1, heads, s, s])],
               outs, feeds, [init("w", w), init("b", bias), init("w2", w2), init("b2", _r(rng, 40))])


def gpt2_layer(root, rng, write_case, vi, init):
    """GPT-2's block: LayerNorm -> unidirectional Attention with past [2, B, N, P, H]
    and present, the raw [B, P + S] attention mask (left padding), out projection, residual."""
    b, h, heads = 2, 16, 2
    weights = {"ln_g": _r(rng, h), "ln_b": _r(rng, h), "qkv_w": _r(rng, h, 3 * h, scale=0.4), "qkv_b": _r(rng, 3 * h),
               "proj_w": _r(rng, h, h, scale=0.4), "proj_b": _r(rng, h)}
    for name, s, past in (("gpt2_layer_prompt", 4, 0), ("gpt2_layer_step", 1, 4)):
        mask = np.ones((b, past + s), np.int32)
        mask[0, :2] = 0  # row 0 left-padded by 2
        nodes = [
            helper.make_node("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], name="LayerNorm_0", axis=-1,
                             epsilon=1e-5),
            helper.make_node("Attention", ["ln", "qkv_w", "qkv_b", "attention_mask", "past_0"], ["attn", "present_0"],
                             name="Attention_0", domain=MS, num_heads=heads, unidirectional=1),
            helper.make_node("MatMul", ["attn", "proj_w"], ["proj"], name="MatMul_0"),
            helper.make_node("Add", ["proj", "proj_b"], ["proj_biased"], name="Add_0"),
            helper.make_node("Add", ["proj_biased", "x"], ["y"], name="Add_1"),
        ]
        feeds = {"x": _r(rng, b, s, h), "attention_mask": mask,
                 "past_0": _r(rng, 2, b, heads, past, h // heads)}
        write_case(root, name, nodes,
                   [vi("x", F, ["batch", "seq", h]), vi("attention_mask", I32, ["batch", "total"]),
                    vi("past_0", F, [2, "batch", heads, "past", h // heads])],
                   [vi("y", F, ["batch", "seq", h]), vi("present_0", F, [2, "batch", heads, "total", h // heads])],
                   feeds, [init(k, v) for k, v in weights.items()])


def attention_mask_4d(root, rng, write_case, vi, init):
    """Megatron GPT-2's [B, 1, M, M] mask with a past: ONNX Runtime's CPU kernel refuses
    the form, so the reference is numpy, reading rows past .. past + S - 1 as its GPU kernels do."""
    b, s, past, h, heads, m = 2, 3, 2, 8, 2, 8
    hd = h // heads
    x, w, bias = _r(rng, b, s, h), _r(rng, h, 3 * h, scale=0.5), _r(rng, 3 * h)
    pst = _r(rng, 2, b, heads, past, hd)
    mask = np.tril(np.ones((m, m), np.int32))[None, None].repeat(b, 0)
    mask[1, :, :, 0] = 0  # row 1: its first key padded
    node = helper.make_node("Attention", ["x", "w", "bias", "mask", "past"], ["y", "present"], name="Attention_4d",
                            domain=MS, num_heads=heads, unidirectional=1)
    write_case(root, "attention_mask_4d", [node],
               [vi("x", F, [b, s, h]), vi("mask", I32, [b, 1, m, m]), vi("past", F, [2, b, heads, past, hd])],
               [vi("y", F, [b, s, h]), vi("present", F, [2, b, heads, past + s, hd])],
               {"x": x, "mask": mask, "past": pst}, [init("w", w), init("bias", bias)])
    qkv = (x.astype(np.float64) @ w + bias).reshape(b, s, 3, heads, hd).transpose(2, 0, 3, 1, 4)
    k = np.concatenate([pst[0], qkv[1]], axis=2)
    v = np.concatenate([pst[1], qkv[2]], axis=2)
    t = past + s
    scores = qkv[0] @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    scores = scores + np.where(mask[:, :, past:past + s, :t] > 0, 0.0, -10000.0)
    causal = np.arange(t)[None, :] > (past + np.arange(s))[:, None]
    scores = np.where(causal, -np.inf, scores)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ v).transpose(0, 2, 1, 3).reshape(b, s, h)
    d = os.path.join(root, "attention_mask_4d")
    os.makedirs(os.path.join(d, "expected"), exist_ok=True)
    np.save(os.path.join(d, "expected", "y.npy"), y.astype(np.float32))
    np.save(os.path.join(d, "expected", "present.npy"), np.stack([k, v]).astype(np.float32))
    open(os.path.join(d, "REFERENCE"), "w").write("numpy: ONNX Runtime's CPU kernel refuses the 4-D mask\n")


def mha_forms(root, rng, write_case, vi, init):
    b, s, l, heads, d = 2, 4, 6, 2, 8
    hid = heads * d
    feeds = {"q": _r(rng, b, s, hid), "k": _r(rng, b, l, hid), "v": _r(rng, b, l, hid),
             "qkv": _r(rng, b, s, heads, 3, d), "kv": _r(rng, b, l, heads, 2, d),
             "k4": _r(rng, b, heads, l, d), "v4": _r(rng, b, heads, l, d),
             "kq": _r(rng, b, s, hid), "vq": _r(rng, b, s, hid),
             "pk": _r(rng, b, heads, 3, d), "pv": _r(rng, b, heads, 3, d),
             "pad_l": np.array([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], np.int32),
             "ends": np.array([4, 6], np.int32),
             "pad_t": np.array([[0, 1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 1, 1, 1]], np.int32),
             "mask3": np.ones((b, s, l), np.int32),
             "abias": _r(rng, 1, heads, s, 3 + s)}
    feeds["mask3"][0, :, 5] = 0
    feeds["mask3"][1, 2, :3] = 0
    bias = _r(rng, 3 * hid)
    nodes = [
        # Separate Q/K/V with the bias and a 2-D key padding mask.
        helper.make_node("MultiHeadAttention", ["q", "k", "v", "bias", "pad_l"], ["y_separate"], name="MHA_separate",
                         domain=MS, num_heads=heads),
        # 1-D key padding (ends) and a custom scale.
        helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "ends"], ["y_ends", "pk_ends", "pv_ends"], name="MHA_ends",
                         domain=MS, num_heads=heads, scale=0.2),
        # 3-D mask.
        helper.make_node("MultiHeadAttention", ["q", "k", "v", "", "mask3"], ["y_mask3"], name="MHA_mask3",
                         domain=MS, num_heads=heads, mask_filter_value=-500.0),
        # Cross-attention: K and V already [B, N, L, H].
        helper.make_node("MultiHeadAttention", ["q", "k4", "v4", "", "ends"], ["y_cross"], name="MHA_cross",
                         domain=MS, num_heads=heads),
        # Decoder self-attention: past and present, causal, attention_bias, [B, P + S] padding.
        helper.make_node("MultiHeadAttention", ["q", "kq", "vq", "bias", "pad_t", "abias", "pk", "pv"],
                         ["y_past", "present_key", "present_value"], name="MHA_past", domain=MS, num_heads=heads,
                         unidirectional=1),
    ]
    outs = [vi("y_separate", F, [b, s, hid]), vi("y_ends", F, [b, s, hid]), vi("y_mask3", F, [b, s, hid]),
            vi("y_cross", F, [b, s, hid]), vi("y_past", F, [b, s, hid]),
            vi("present_key", F, [b, heads, 3 + s, d]), vi("present_value", F, [b, heads, 3 + s, d]),
            vi("pk_ends", F, [b, heads, l, d]), vi("pv_ends", F, [b, heads, l, d])]
    ins = [vi(k, I32 if v.dtype == np.int32 else F, list(v.shape)) for k, v in feeds.items()
           if k not in ("qkv", "kv")]
    write_case(root, "mha_forms", nodes, ins, outs, {k: v for k, v in feeds.items() if k not in ("qkv", "kv")},
               [init("bias", bias)])
    # The packed forms, which ONNX Runtime's CPU kernel refuses: their reference is
    # reference.onnx, the same op on the parts Gather + Reshape take out of the pack.
    packed_case(root, "mha_packed_qkv", "qkv", feeds["qkv"], ["", "", "bias"], {"unidirectional": 1}, s, heads, d,
                write_case, vi, init, bias)
    packed_case(root, "mha_packed_kv", "kv", feeds["kv"], ["", "", "pad_l"], {}, s, heads, d,
                write_case, vi, init, bias, query=feeds["q"], pad=feeds["pad_l"])


def packed_case(root, name, packed, data, rest, attrs, s, heads, d, write_case, vi, init, bias, query=None, pad=None):
    b, hid = data.shape[0], heads * d
    parts = data.shape[3]
    lead = ["q"] if parts == 2 else []
    ins = [vi("q", F, list(query.shape))] if parts == 2 else []
    ins.append(vi(packed, F, list(data.shape)))
    feeds = {packed: data}
    if parts == 2:
        feeds["q"] = query
    if pad is not None:
        ins.append(vi("pad_l", I32, list(pad.shape)))
        feeds["pad_l"] = pad
    inits = [init("bias", bias)] if "bias" in rest else []
    node = helper.make_node("MultiHeadAttention", lead + [packed] + rest, ["y"], name=f"MHA_{name}", domain=MS,
                            num_heads=heads, **attrs)
    write_case(root, name, [node], ins, [vi("y", F, [b, s, hid])], feeds, inits)
    # The reference graph: each part Gather(axis 3) -> Reshape [B, L, N·H].
    nodes, names = [], []
    for i in range(parts):
        nodes += [helper.make_node("Gather", [packed, f"idx{i}"], [f"g{i}"], axis=3),
                  helper.make_node("Reshape", [f"g{i}", "flat"], [f"p{i}"])]
        names.append(f"p{i}")
        inits.append(init(f"idx{i}", np.array(i, np.int64)))
    inits.append(init("flat", np.array([0, 0, -1], np.int64)))
    nodes.append(helper.make_node("MultiHeadAttention", lead + names + rest[parts - 1:], ["y"], name="MHA", domain=MS,
                                  num_heads=heads, **attrs))
    graph = helper.make_graph(nodes, name, ins, [vi("y", F, [b, s, hid])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    save(model, os.path.join(root, name, "reference.onnx"))


def bad_cases(root, rng, write_case, vi, init):
    h = 16
    x = _r(rng, 2, 3, h)

    def bad(name, error, nodes, ins, outs, feeds, inits=()):
        write_case(root, name, nodes, ins, outs, feeds, inits)
        open(os.path.join(root, name, "ERROR"), "w").write(error + "\n")

    bad("attention_heads_divide",
        "node 'att' (com.microsoft.Attention): hidden size 16 is not a positive multiple of num_heads 3",
        [helper.make_node("Attention", ["x", "w"], ["y"], name="att", domain=MS, num_heads=3)],
        [vi("x", F, [2, 3, h])], [vi("y", F, [2, 3, h])], {"x": x}, [init("w", _r(rng, h, 3 * h))])
    bad("attention_mask_shape",
        "node 'att' (com.microsoft.Attention): mask_index 'm' has shape [3]: a 1-D mask is [batch = 2] or [2 * batch]",
        [helper.make_node("Attention", ["x", "w", "", "m"], ["y"], name="att", domain=MS, num_heads=2)],
        [vi("x", F, [2, 3, h]), vi("m", I32, [3])], [vi("y", F, [2, 3, h])],
        {"x": x, "m": np.array([3, 3, 3], np.int32)}, [init("w", _r(rng, h, 3 * h))])
    bad("attention_past_disagree",
        "node 'att' (com.microsoft.Attention): past 'past' must be [2, batch, 2, past, 8]: it disagrees with num_heads",
        [helper.make_node("Attention", ["x", "w", "", "", "past"], ["y", "present"], name="att", domain=MS,
                          num_heads=2, unidirectional=1)],
        [vi("x", F, [2, 3, h]), vi("past", F, [2, 2, 4, 1, 4])], [vi("y", F, [2, 3, h]), vi("present", F, None)],
        {"x": x, "past": _r(rng, 2, 2, 4, 1, 4)}, [init("w", _r(rng, h, 3 * h))])
    bad("mha_past_disagree",
        "node 'mha' (com.microsoft.MultiHeadAttention): past_key 'pk' holds 3 positions, past_value 'pv' 2",
        [helper.make_node("MultiHeadAttention", ["x", "x", "x", "", "", "", "pk", "pv"], ["y", "pk_out", "pv_out"],
                          name="mha", domain=MS, num_heads=2)],
        [vi("x", F, [2, 3, h]), vi("pk", F, [2, 2, 3, 8]), vi("pv", F, [2, 2, 2, 8])],
        [vi("y", F, [2, 3, h]), vi("pk_out", F, None), vi("pv_out", F, None)],
        {"x": x, "pk": _r(rng, 2, 2, 3, 8), "pv": _r(rng, 2, 2, 2, 8)})
    bad("mha_heads_divide",
        "node 'mha' (com.microsoft.MultiHeadAttention): query 'x' has 16 columns, not a multiple of num_heads 3",
        [helper.make_node("MultiHeadAttention", ["x", "x", "x"], ["y"], name="mha", domain=MS, num_heads=3)],
        [vi("x", F, [2, 3, h])], [vi("y", F, [2, 3, h])], {"x": x})
    bad("mha_mask_shape",
        "node 'mha' (com.microsoft.MultiHeadAttention): key_padding_mask 'm' has rank 5",
        [helper.make_node("MultiHeadAttention", ["x", "x", "x", "", "m"], ["y"], name="mha", domain=MS, num_heads=2)],
        [vi("x", F, [2, 3, h]), vi("m", I32, [2, 1, 1, 3, 3])], [vi("y", F, [2, 3, h])],
        {"x": x, "m": np.ones((2, 1, 1, 3, 3), np.int32)})


def generate(root, bad_root, write_case, vi, init):
    rng = np.random.default_rng(3939)
    bert_layer(root, rng, write_case, vi, init)
    attention_masks(root, rng, write_case, vi, init)
    gpt2_layer(root, rng, write_case, vi, init)
    mha_forms(root, rng, write_case, vi, init)
    attention_mask_4d(root, rng, write_case, vi, init)
    bad_cases(bad_root, rng, write_case, vi, init)
