"""PyTorch's own nn.MultiheadAttention and nn.TransformerEncoderLayer (torch_modules.py)."""
import numpy as np

import torch_modules
from spec import SEQ, ModelSpec, block

D_MODEL, HEADS = 64, 4
HEAD_DIM = D_MODEL // HEADS
T = 13
SEQ_FIRST = {0: "seq", 1: "batch"}
# The modules merge their heads into the batch, (B·H, T, D); the fusion splits them back out and fuses
# with the true head count.
MERGED = {"module_heads": HEADS}


def batch_first_x(module, rng):
    return {"x": rng.standard_normal((2, T, D_MODEL)).astype(np.float32)}


def seq_first_x(module, rng):
    return {"x": rng.standard_normal((T, 2, D_MODEL)).astype(np.float32)}


def both_sides(make_x):
    """key_padding_mask (True pads): row 0 left-padded by 3, row 1 right-padded by 4."""
    def make(module, rng):
        inputs = make_x(module, rng)
        pad = np.zeros((2, T), dtype=bool)
        pad[0, :3] = True
        pad[1, -4:] = True
        inputs["key_padding_mask"] = pad
        return inputs
    return make


# Sequence-first x, padded on both sides.
both_sides_padding = both_sides(seq_first_x)


def with_padding(make_x):
    """key_padding_mask (True pads): row 0 right-padded by 3, row 1 by 5 (a causal row whose every key
    is padded, as left padding gives, is NaN in PyTorch)."""
    def make(module, rng):
        inputs = make_x(module, rng)
        pad = np.zeros((2, T), dtype=bool)
        pad[0, -3:] = True
        pad[1, -5:] = True
        inputs["key_padding_mask"] = pad
        return inputs
    return make


MHA = f"nn.MultiheadAttention(d_model {D_MODEL}, {HEADS} heads) self-attention"
CAUSAL = "attn_mask from nn.Transformer.generate_square_subsequent_mask"
SPECS = [
    ModelSpec(name="torch_mha_causal", description=f"{MHA}, batch_first, {CAUSAL} (float), need_weights=False.",
              build=lambda: torch_modules.TorchMha(D_MODEL, HEADS, batch_first=True), make_inputs=batch_first_x,
              input_names=["x"], output_names=["y"], dynamic_axes={"x": SEQ, "y": SEQ},
              attention_blocks=[block("causal", HEADS, HEAD_DIM)], expected_fusions=1, seed=141, extra=MERGED),
    ModelSpec(name="torch_mha_causal_seq_first_op13",
              description=f"{MHA}, sequence-first (T, B, C), bool attn_mask sliced from a triu(ones, 1) buffer of 64 "
              "positions, need_weights=False; opset 13, static shapes.",
              build=lambda: torch_modules.TorchMha(D_MODEL, HEADS, batch_first=False, bool_mask=True),
              make_inputs=seq_first_x, input_names=["x"], output_names=["y"], dynamic_axes={},
              attention_blocks=[block("causal", HEADS, HEAD_DIM)], expected_fusions=1, seed=142, opset=13,
              extra=MERGED),
    ModelSpec(name="torch_mha_causal_padding",
              description=f"{MHA}, batch_first, {CAUSAL} and a key_padding_mask input (bool, True pads), "
              "need_weights=False; opset 14. Sample: rows right-padded by 3 and 5. The padding "
              "is merged into the batch with the heads, (B·H, 1, S): fused as causal + padding with 4 heads.",
              build=lambda: torch_modules.TorchMha(D_MODEL, HEADS, batch_first=True, padding=True),
              make_inputs=with_padding(batch_first_x), input_names=["x", "key_padding_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ, "key_padding_mask": SEQ, "y": SEQ},
              attention_blocks=[block("causal+padding", HEADS, HEAD_DIM)], expected_fusions=1, seed=143, opset=14,
              extra=MERGED),
    ModelSpec(name="torch_mha_weights",
              description=f"{MHA}, sequence-first, the bool attn_mask buffer, key_padding_mask, need_weights=True (the "
              "weights averaged over the heads are a second output): the probabilities are read by P·V and by the "
              "averaging; fused as causal + padding with 4 heads, the weights read from the fused op's "
              "probabilities output.",
              build=lambda: torch_modules.TorchMha(D_MODEL, HEADS, batch_first=False, bool_mask=True, padding=True,
                                                   need_weights=True),
              make_inputs=with_padding(seq_first_x), input_names=["x", "key_padding_mask"],
              output_names=["y", "weights"],
              dynamic_axes={"x": SEQ_FIRST, "key_padding_mask": SEQ, "y": SEQ_FIRST,
                            "weights": {0: "batch", 1: "seq", 2: "seq"}},
              attention_blocks=[block("causal+padding", HEADS, HEAD_DIM)], expected_fusions=1, seed=144,
              extra={**MERGED, "weights": True}),
    ModelSpec(name="torch_encoder_layer_causal",
              description=f"nn.TransformerEncoderLayer(d_model {D_MODEL}, {HEADS} heads, feed-forward "
              f"{2 * D_MODEL}, batch_first) with src_mask from generate_square_subsequent_mask.",
              build=lambda: torch_modules.TorchEncoderLayer(D_MODEL, HEADS), make_inputs=batch_first_x,
              input_names=["x"], output_names=["y"], dynamic_axes={"x": SEQ, "y": SEQ},
              attention_blocks=[block("causal", HEADS, HEAD_DIM)], expected_fusions=1, seed=145, extra=MERGED),
]


SPECS += [
    ModelSpec(name=f"torch_mha_padding_op{opset}",
              description=f"{MHA}, sequence-first, a key_padding_mask input (True pads) and no attn_mask, "
              f"need_weights=False; opset {opset}, {'dynamic' if dynamic else 'static'} axes. Sample: row 0 "
              "left-padded by 3, row 1 right-padded by 4.",
              build=lambda: torch_modules.TorchMhaPadding(D_MODEL, HEADS), make_inputs=both_sides_padding,
              input_names=["x", "key_padding_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ_FIRST, "key_padding_mask": SEQ, "y": SEQ_FIRST} if dynamic else {},
              attention_blocks=[block("padding", HEADS, HEAD_DIM)], expected_fusions=1, seed=146 + i, opset=opset,
              extra=MERGED)
    for i, (opset, dynamic) in enumerate([(13, False), (14, True), (17, True)])
] + [
    ModelSpec(name="torch_decoder_layer_causal",
              description=f"nn.TransformerDecoderLayer(d_model {D_MODEL}, {HEADS} heads, batch_first): causal "
              "self-attention (tgt_mask from generate_square_subsequent_mask) and unmasked cross-attention to a "
              "memory of 9 positions.",
              build=lambda: torch_modules.TorchDecoderLayer(D_MODEL, HEADS),
              make_inputs=lambda module, rng: {"x": rng.standard_normal((2, T, D_MODEL)).astype(np.float32),
                                               "memory": rng.standard_normal((2, 9, D_MODEL)).astype(np.float32)},
              input_names=["x", "memory"], output_names=["y"],
              dynamic_axes={"x": SEQ, "memory": {0: "batch", 1: "memory"}, "y": SEQ},
              attention_blocks=[block("causal", HEADS, HEAD_DIM), block("none", HEADS, HEAD_DIM)],
              expected_fusions=2, seed=150, extra=MERGED),
    ModelSpec(name="torch_encoder_causal_op14",
              description=f"nn.TransformerEncoder of two sequence-first nn.TransformerEncoderLayer(d_model {D_MODEL}, "
              f"{HEADS} heads) with the causal mask from generate_square_subsequent_mask; opset 14, static axes.",
              build=lambda: torch_modules.TorchEncoder(D_MODEL, HEADS), make_inputs=seq_first_x,
              input_names=["x"], output_names=["y"], dynamic_axes={},
              attention_blocks=[block("causal", HEADS, HEAD_DIM)] * 2, expected_fusions=2, seed=151, opset=14,
              extra=MERGED),
    ModelSpec(name="torch_transformer",
              description=f"nn.Transformer(d_model {D_MODEL}, {HEADS} heads, one encoder and one decoder layer, "
              "batch_first): an unmasked encoder, a causal decoder self-attention with a tgt_key_padding_mask "
              "input (True pads; rows right-padded by 3 and 5), unmasked cross-attention.",
              build=lambda: torch_modules.TorchTransformer(D_MODEL, HEADS),
              make_inputs=lambda module, rng: {
                  "src": rng.standard_normal((2, 9, D_MODEL)).astype(np.float32),
                  "tgt": rng.standard_normal((2, T, D_MODEL)).astype(np.float32),
                  "tgt_key_padding_mask": np.array([[False] * (T - 3) + [True] * 3,
                                                    [False] * (T - 5) + [True] * 5])},
              input_names=["src", "tgt", "tgt_key_padding_mask"], output_names=["y"],
              dynamic_axes={"src": {0: "batch", 1: "source"}, "tgt": SEQ, "tgt_key_padding_mask": SEQ, "y": SEQ},
              attention_blocks=[block("none", HEADS, HEAD_DIM), block("causal+padding", HEADS, HEAD_DIM),
                                block("none", HEADS, HEAD_DIM)],
              expected_fusions=3, seed=152, extra=MERGED),
]


def head_mask_inputs(module, rng):
    """Sequence-first x and a (B·H, T, T) bool mask (True hides): causal for even heads, the keys after
    the query's next one for odd heads; every row sees its own key."""
    inputs = seq_first_x(module, rng)
    causal = np.triu(np.ones((T, T), dtype=bool), 1)
    wider = np.triu(np.ones((T, T), dtype=bool), 2)
    inputs["attn_mask"] = np.stack([causal if h % 2 == 0 else wider for _ in range(2) for h in range(HEADS)])
    return inputs


SPECS += [
    ModelSpec(name="torch_mha_trap_shifted_mask",
              description=f"A trap: {MHA}, batch_first, attn_mask triu(ones, 0) * -1e4 (the diagonal hidden too): "
              "one key fewer than causal; row 0 sees no key. Must not fuse as causal.",
              build=lambda: torch_modules.TorchMhaShiftedMask(D_MODEL, HEADS), make_inputs=batch_first_x,
              input_names=["x"], output_names=["y"], dynamic_axes={"x": SEQ, "y": SEQ},
              attention_blocks=[block("explicit", HEADS, HEAD_DIM)], expected_fusions=0, seed=153,
              extra={**MERGED, "negative": True, "trap": "mask_not_causal", "explicit_fusion_allowed": True,
                     "expected_causal_fusions": 0}),
    ModelSpec(name="torch_mha_trap_head_mask",
              description=f"A trap: {MHA}, sequence-first, a 3-D (B·H, T, S) bool attn_mask input, causal for even "
              "heads and one key wider for odd heads. Must not fuse as causal.",
              build=lambda: torch_modules.TorchMhaHeadMask(D_MODEL, HEADS), make_inputs=head_mask_inputs,
              input_names=["x", "attn_mask"], output_names=["y"],
              dynamic_axes={"x": SEQ_FIRST, "attn_mask": {0: "batch_heads", 1: "seq", 2: "seq"}, "y": SEQ_FIRST},
              attention_blocks=[block("explicit", HEADS, HEAD_DIM)], expected_fusions=0, seed=154,
              extra={**MERGED, "expected_causal_fusions": 0}),
    ModelSpec(name="torch_mha_head_mask_static",
              description=f"{MHA}, sequence-first, a 3-D (B·H, T, S) bool attn_mask input, causal for even heads and "
              "one key wider for odd heads; opset 17, static axes: the mask's first dim is 8 = B·H, so it is viewed "
              "as (B, H, T, S) and fused as an explicit mask per head with 4 heads, never as causal.",
              build=lambda: torch_modules.TorchMhaHeadMask(D_MODEL, HEADS), make_inputs=head_mask_inputs,
              input_names=["x", "attn_mask"], output_names=["y"], dynamic_axes={},
              attention_blocks=[block("explicit", HEADS, HEAD_DIM)], expected_fusions=1, seed=165,
              extra={**MERGED, "expected_causal_fusions": 0}),
]


def weights_spec(name, seed, opset, batch_first, dynamic, causal, bool_mask, padding, average, kind):
    """nn.MultiheadAttention with need_weights=True: the weights (averaged (B, T, S) or per head (B, H, T, S))
    are a second output, read from the fused op's probabilities output."""
    x_axes = SEQ if batch_first else SEQ_FIRST
    w_axes = {0: "batch", 1: "seq", 2: "seq"} if average else {0: "batch", 2: "seq", 3: "seq"}
    inputs = batch_first_x if batch_first else seq_first_x
    if padding:
        # Causal rows must see a key (a causal row whose every key is padded is NaN in PyTorch): right padding;
        # without the causal part, both sides.
        inputs = with_padding(inputs) if causal else both_sides(inputs)
    mask = ("bool attn_mask sliced from a buffer" if bool_mask else f"{CAUSAL} (float)") if causal else "no attn_mask"
    return ModelSpec(
        name=name,
        description=f"{MHA}, {'batch_first' if batch_first else 'sequence-first'}, {mask}"
        f"{', a key_padding_mask input (True pads)' if padding else ''}, need_weights=True with "
        f"average_attn_weights={average} (the weights {'averaged over the heads' if average else 'per head'} are a "
        f"second output); opset {opset}, {'dynamic' if dynamic else 'static'} axes. Fused as {kind} with 4 heads, the "
        "weights read from the fused op's probabilities output.",
        build=lambda: torch_modules.TorchMha(D_MODEL, HEADS, batch_first=batch_first, bool_mask=bool_mask,
                                             padding=padding, need_weights=True, causal=causal, average=average),
        make_inputs=inputs, input_names=["x", "key_padding_mask"] if padding else ["x"],
        output_names=["y", "weights"],
        dynamic_axes=({"x": x_axes, "y": x_axes, "weights": w_axes, **({"key_padding_mask": SEQ} if padding else {})}
                      if dynamic else {}),
        attention_blocks=[block(kind, HEADS, HEAD_DIM)], expected_fusions=1, seed=seed, opset=opset,
        extra={**MERGED, "weights": True})



SPECS += [
    weights_spec("torch_mha_weights_per_head_op14", 160, 14, batch_first=True, dynamic=False, causal=True,
                 bool_mask=False, padding=True, average=False, kind="causal+padding"),
    weights_spec("torch_mha_weights_causal_op14", 161, 14, batch_first=True, dynamic=True, causal=True,
                 bool_mask=False, padding=False, average=True, kind="causal"),
    weights_spec("torch_mha_weights_padding_op17", 162, 17, batch_first=False, dynamic=True, causal=False,
                 bool_mask=False, padding=True, average=False, kind="padding"),
    weights_spec("torch_mha_weights_plain_op17", 163, 17, batch_first=False, dynamic=False, causal=False,
                 bool_mask=False, padding=False, average=True, kind="none"),
    weights_spec("torch_mha_weights_bool_per_head_op17", 164, 17, batch_first=False, dynamic=True, causal=True,
                 bool_mask=True, padding=False, average=False, kind="causal"),
]

import megatron  # noqa: E402

SPECS += [
    ModelSpec(name="megatron_seq_first",
              description=f"Megatron-style self-attention (d_model {D_MODEL}, {HEADS} heads), sequence-first "
              "(T, B, C): baddbmm over B·H into a preallocated buffer with alpha 1/(√D·3), the float scores "
              "multiplied by the layer coefficient 3, a causal mask sliced from a 64-position buffer "
              "(masked_fill -1e4), the probabilities viewed back to (B·H, T, S) for P·V.",
              build=lambda: megatron.MegatronSelfAttention(D_MODEL, HEADS), make_inputs=seq_first_x,
              input_names=["x"], output_names=["y"], dynamic_axes={"x": SEQ_FIRST, "y": SEQ_FIRST},
              attention_blocks=[block("causal", HEADS, HEAD_DIM)], expected_fusions=1, seed=155, extra=MERGED),
]
