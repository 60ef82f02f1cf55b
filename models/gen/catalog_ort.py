"""The attention graphs of ONNX Runtime's fusion-test forms (ort_forms.py), with numpy reference outputs.

Batch 3 in every sample: row 0 left-padded, row 1 right-padded, row 2 padded everywhere but its last
key (BERT) or entirely (GPT-2), so rows that see no key are checked against the graph's -10000 fills.
"""
import numpy as np

import numpy_onnx
import ort_forms as F
from spec import GraphSpec, block

BATCH = 3


def padding(total, dtype, fully_padded_row):
    mask = np.ones((BATCH, total))
    mask[0, :3] = 0
    mask[1, total - 2:] = 0
    mask[2, :] = 0
    if not fully_padded_row:
        mask[2, -1] = 1
    return mask.astype(dtype)


def hidden_states(rng, seq, hidden):
    return {"input_1": rng.standard_normal((BATCH, seq, hidden)).astype(np.float32),
            "input_2": rng.standard_normal((BATCH, seq, hidden)).astype(np.float32)}


def bert_inputs(seq, hidden, dtype, mask_name="input_mask", fully_padded_row=False):
    def make(rng):
        feeds = hidden_states(rng, seq, hidden)
        feeds[mask_name] = padding(seq, dtype, fully_padded_row)
        return feeds
    return make


def gpt2_inputs(seq, past, dtype, hidden=64, heads=4):
    def make(rng):
        feeds = hidden_states(rng, seq, hidden)
        feeds["attention_mask"] = padding(seq + past, dtype, True)
        if past:
            feeds["past"] = rng.standard_normal((2, BATCH, heads, past, hidden // heads)).astype(np.float32)
        return feeds
    return make


BERT = ("ONNX Runtime's BERT attention fusion-test form (ort_forms.bert): post-LayerNorm block at opset 16 "
        "(LayerNormalization below its opset 17), Q/K/V MatMul + Add, Reshape (0, 0, H, D), K transposed "
        "(0, 2, 3, 1), (1 - Cast(mask)) * -10000 added to scores / sqrt(D)")
GPT2 = ("ONNX Runtime's GPT-2 attention fusion-test form (ort_forms.gpt2): one QKV MatMul + Add and Split, "
        "a uint8 tril buffer sliced by Shape/Slice arithmetic and Cast to bool, Where(mask, scores / sqrt(D), "
        "-10000) + (1 - attention_mask) * -10000, Gemm projection")
SAMPLE = "Sample: batch 3, row 0 left-padded by 3, row 1 right-padded by 2, row 2 "


def spec(name, description, graph, inputs, blocks, seed, strict=False):
    return GraphSpec(name=name, description=description, build_graph=graph, make_inputs=inputs,
                     reference=numpy_onnx.evaluate, attention_blocks=blocks, expected_fusions=len(blocks),
                     seed=seed, strict_check=strict)


def padding_block(heads, head_dim):
    return [block("padding", heads, head_dim)]


def causal_padding_block():
    return [block("causal+padding", 4, 16)]


def bart_inputs(with_mask):
    """Static (2, 8, 16) states; the mask: causal, with batch row 1's last 2 keys padded (True = attend)."""
    def make(rng):
        feeds = {"input_1": rng.standard_normal((2, 8, 16)).astype(np.float32)}
        if with_mask:
            keep = np.tril(np.ones((8, 8), dtype=bool))[None, None].repeat(2, axis=0)
            keep[1, :, :, 6:] = False
            keep[1, :, 6:, 6:] = np.tril(np.ones((2, 2), dtype=bool))  # padded rows still see themselves
            feeds["attention_mask"] = keep
        return feeds
    return make


def dit_inputs(k_input):
    def make(rng):
        if not k_input:
            return {"input_0": rng.standard_normal((2, 4, 32)).astype(np.float32)}
        return {"q_bnsh": rng.standard_normal((2, 4, 4, 8)).astype(np.float32) * 0.1,
                "k_bnhs": rng.standard_normal((2, 4, 8, 4)).astype(np.float32) * 0.1,
                "v_bnsh": rng.standard_normal((2, 4, 4, 8)).astype(np.float32)}
    return make


BART = ("ONNX Runtime's BART SDPA fusion-test form (ort_forms.bart_sdpa, the export of transformers 4.49+): "
        "opset 18, static shapes, K transposed through (B·H, S, D) by Reshape, Transpose (0, 2, 1), Reshape, Q and "
        "K each times 1/sqrt(D), Where(IsNaN(p), 0, p) after the softmax; 4 heads of 4")

SPECS = [
    spec("ort_bert_attention", f"{BERT}; 2 heads of 8, int64 mask. {SAMPLE}shows only its last key.",
         lambda: F.bert(seed=71), bert_inputs(9, 16, np.int64), padding_block(2, 8), 71),
    spec("ort_bert_attention_swapped", f"{BERT}; every Add's operands swapped. {SAMPLE}padded entirely.",
         lambda: F.bert(swap=True, seed=72), bert_inputs(9, 16, np.int64, fully_padded_row=True),
         padding_block(2, 8), 72),
    spec("ort_bert_attention_pruned", f"{BERT}; pruned heads: Q/K and V 8 wide (2 heads of 4) on a hidden "
         f"size of 16. {SAMPLE}shows only its last key.",
         lambda: F.bert(qk_hidden=8, v_hidden=8, seed=73), bert_inputs(9, 16, np.int64), padding_block(2, 4), 73),
    spec("ort_bert_attention_varied_qkv", f"{BERT}; Q/K 24 wide (2 heads of 12) and V 16 wide (2 heads of 8). "
         f"{SAMPLE}shows only its last key.", lambda: F.bert(qk_hidden=24, v_hidden=16, seed=74),
         bert_inputs(9, 16, np.int64), padding_block(2, 12), 74),
    spec("ort_bert_attention_float_mask", f"{BERT}; a float mask without the Cast. {SAMPLE}padded entirely.",
         lambda: F.bert(float_mask=True, seed=75), bert_inputs(9, 16, np.float32, fully_padded_row=True),
         padding_block(2, 8), 75),
    spec("ort_gpt2_attention_past", f"{GPT2}; past (2, B, 4, P, 16) Split and Squeezed, present = "
         f"Concat(Unsqueeze(K), Unsqueeze(V)), the float mask Reshaped to (B, -1). {SAMPLE}padded entirely; "
         "past 5, T 4.", lambda: F.gpt2(seed=76), gpt2_inputs(4, 5, np.float32), causal_padding_block(), 76),
    spec("ort_gpt2_attention_past_swapped", f"{GPT2}; as ort_gpt2_attention_past with every Add's operands "
         f"swapped. {SAMPLE}padded entirely; past 5, T 4.", lambda: F.gpt2(swap=True, seed=77),
         gpt2_inputs(4, 5, np.float32), causal_padding_block(), 77),
    spec("ort_gpt2_attention_no_past", f"{GPT2}; no past, float mask. {SAMPLE}padded entirely; T 9.",
         lambda: F.gpt2(past=False, seed=78), gpt2_inputs(9, 0, np.float32), causal_padding_block(), 78),
    spec("ort_gpt2_attention_no_past_cast", f"{GPT2}; no past, an int32 mask Cast to float, every Add's "
         f"operands swapped. {SAMPLE}padded entirely; T 9.", lambda: F.gpt2(past=False, int_mask=True, swap=True,
                                                                            seed=79),
         gpt2_inputs(9, 0, np.int32), causal_padding_block(), 79),
    spec("ort_tf2onnx_attention_3d", "tf2onnx's 3-D BERT attention as ONNX Runtime's fusion tests write it "
         "(ort_forms.tf_einsum), opset 13: Einsum projections 'abc,cde->abde', scores 'aecd,abcd->acbe' (keys as "
         "the first operand), context 'acbe,aecd->abcd', output 'abcd,cde->abe', the mask Unsqueezed to "
         f"(B, 1, 1, S) and Sliced with int32 ends of 1e9, (1 - mask) * -10000; 4 heads of 4. {SAMPLE}shows only "
         "its last key.", lambda: F.tf_einsum(seed=80), bert_inputs(9, 16, np.int64),
         # The scale multiplies Q on its (B, S, H, D) layout, before the Einsum: the fused op reads it scaled.
         [block("padding", 4, 4, scale=1.0)], 80),
    spec("ort_bart_sdpa_attention", f"{BART}; a bool (B, 1, T, S) mask input made additive by Where(mask, 0, "
         "-1e9). Sample: a causal mask, batch row 1's last 2 keys hidden from the rows before them.",
         lambda: F.bart_sdpa(seed=81), bart_inputs(True), [block("explicit", 4, 4, scale=0.25)], 81, strict=True),
    spec("ort_bart_sdpa_attention_no_mask", f"{BART}; no mask (the encoder).", lambda: F.bart_sdpa(with_mask=False,
                                                                                                seed=82),
         bart_inputs(False), [block("none", 4, 4, scale=0.25)], 82, strict=True),
    spec("ort_dit_attention", "ONNX Runtime's DiT fusion-test form (ort_forms.dit, F5-TTS): opset 17, static "
         "(2, 4, 32) states, Q/K/V MatMul without bias, K transposed again to (B, H, D, S), scores times 100 "
         "(a custom scale), no mask; 4 heads of 8.", lambda: F.dit(seed=83), dit_inputs(False),
         [block("none", 4, 8, scale=100.0)], 83, strict=True),
    spec("ort_dit_attention_k_input", "As ort_dit_attention with Q (B, H, S, D), K (B, H, D, S) and V given as "
         "inputs, K already transposed.", lambda: F.dit(k_input=True, seed=84), dit_inputs(True),
         [block("none", 4, 8, scale=100.0)], 84, strict=True),
]
