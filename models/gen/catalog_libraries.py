"""Whole small models as other libraries write their attention: Hugging Face's GPT-J (hf_gptj.py),
Falcon-7B (hf_falcon.py), DistilBERT (hf_distilbert.py), GPT-Neo with global and local layers
(hf_gpt_neo.py), CLIP's text encoder (hf_clip.py), and Karpathy's nanoGPT (nanogpt.py); and decode graphs
with a KV cache of GPT-NeoX / Pythia (hf_gpt_neox.py) and Phi (hf_phi.py). Vocab 97, d_model 64, 4 heads
of 16, 2 layers, context 64, eval mode, torch's default initialisation from the seed; nanoGPT has its own
_init_weights, and the embeddings tied to an lm_head (and GPT-Neo's positions) are drawn N(0, 0.02) as
Hugging Face's _init_weights draws them, so that the logits stay O(1). Each takes input_ids and (but
nanoGPT) an int64 attention_mask with batch row 1 padded: on the left for the decoders, on the right for
the encoders. The decode graphs also take past_key_values.N.key/value (B, H, past, D) and give
present.N.key/value (B, H, past + T, D), as hf_gpt2_decode (catalog_hf's decode inputs: the past is the
presents of a real prefix)."""
import numpy as np
import torch

import hf_bloom
import hf_clip
import hf_distilbert
import hf_falcon
import hf_gpt_neo
import hf_gpt_neox
import hf_gptj
import hf_phi
import hf_t5_decoder
import nanogpt
from catalog_hf import DECODE_AXES, KV_IN, KV_OUT, NEW, PAD, PAST, decode_inputs, padding_mask, tie_lm_head
from export import torch_export, torch_outputs, write_folder
from spec import SEQ, ModelSpec, block

VOCAB, D_MODEL, HEADS, LAYERS, CTX = 97, 64, 4, 2, 64
HEAD_DIM = D_MODEL // HEADS
LEFT_PAD = 2            # decoders: batch row 1 left-padded by this many tokens
RIGHT_PAD = 3           # encoders: batch row 1 right-padded by this many tokens
GPTJ_ROTARY_DIM = 8     # rotary on the first 8 of each head's 16 features (GPT-J 6B: 64 of 256)
NEO_WINDOW = 8          # GPT-Neo's window_size; max_position_embeddings is CTX
NEOX_ROTARY_PCT = 0.25  # GPT-NeoX rotary_pct (Pythia's): rotary on the first 4 of each head's 16 features
PHI_ROTARY = 0.4        # Phi's partial_rotary_factor (phi-2's): int(0.4 * 16) = the first 6 features
GPTJ_T, FALCON_T, DISTILBERT_T, NEO_T, CLIP_T, NANO_T, BLOOM_T = 11, 13, 12, 20, 14, 10, 9
SHAPE = f"vocab {VOCAB}, d_model {D_MODEL}, {HEADS} heads of {HEAD_DIM}, {LAYERS} layers, context {CTX}"


def left_padded(num_tokens):
    mask = np.ones((2, num_tokens), dtype=np.int64)
    mask[1, :LEFT_PAD] = 0
    return mask


def right_padded(num_tokens):
    mask = np.ones((2, num_tokens), dtype=np.int64)
    mask[1, num_tokens - RIGHT_PAD:] = 0
    return mask


def decoder_inputs(num_tokens):
    """input_ids and attention_mask (2, T), row 1 left-padded (random ids under the padding, as hf_gpt2)."""
    def make(module, rng):
        return {"input_ids": rng.randint(0, VOCAB, size=(2, num_tokens)).astype(np.int64),
                "attention_mask": left_padded(num_tokens)}
    return make


def encoder_inputs(num_tokens, eos_last=False):
    """input_ids and attention_mask (2, T), row 1 right-padded with pad id 0; `eos_last`: each row's last
    real token is the eos, the largest id (VOCAB - 1), which CLIP's pooling finds by argmax."""
    def make(module, rng):
        mask = right_padded(num_tokens)
        ids = rng.randint(1, VOCAB - 1, size=(2, num_tokens)).astype(np.int64)
        if eos_last:
            ids[np.arange(2), mask.sum(axis=1) - 1] = VOCAB - 1
        ids[mask == 0] = 0
        return {"input_ids": ids, "attention_mask": mask}
    return make


def nano_inputs(module, rng):
    return {"idx": rng.randint(0, VOCAB, size=(2, NANO_T)).astype(np.int64)}


def export_with_empty_cache(spec, folder):
    """generate.generate's steps, with the module's lazily built caches emptied (reset_cache) between the
    reference run and the export, so that the trace builds them as an export of a freshly loaded model does
    (traced with a filled cache, Falcon's rotary table would be a constant of the sample's length)."""
    torch.manual_seed(spec.seed)
    module = spec.build().eval()
    inputs = spec.make_inputs(module, np.random.RandomState(1000 + spec.seed))
    outputs = torch_outputs(module, inputs, spec.input_names, spec.output_names)
    module.reset_cache()
    model = torch_export(module, inputs, spec.input_names, spec.output_names, spec.dynamic_axes, spec.opset)
    meta = {"name": spec.name.split("/")[-1], "description": spec.description,
            "attention_blocks": spec.attention_blocks, "expected_fusions": spec.expected_fusions, **spec.extra}
    write_folder(folder, model, inputs, outputs, meta, spec.save_model)


T5_ENC = 7             # the encoder output the T5 decoder's cross cache holds; batch row 1 padded by 2
T5_KV_IN = [f"past_key_values.{i}.{part}.{kv}" for i in range(LAYERS) for part in ("decoder", "encoder")
            for kv in ("key", "value")]
T5_KV_OUT = [f"present.{i}.decoder.{kv}" for i in range(LAYERS) for kv in ("key", "value")]
T5_AXES = {"input_ids": SEQ, "logits": SEQ, "attention_mask": {0: "batch", 1: "total_seq"},
           "encoder_attention_mask": {0: "batch", 1: "enc_seq"},
           **{n: {0: "batch", 2: "past_seq" if ".decoder." in n else "enc_seq"} for n in T5_KV_IN},
           **{n: {0: "batch", 2: "total_seq"} for n in T5_KV_OUT}}


def t5_decode_inputs(module, rng):
    """The cache of a real PAST-token prefix (row 1 left-padded) over an encoder output whose row 1 is
    right-padded by 2, then NEW tokens."""
    encoder_mask = np.ones((2, T5_ENC), dtype=np.int64)
    encoder_mask[1, T5_ENC - 2:] = 0
    prefix = rng.randint(0, VOCAB, size=(2, PAST)).astype(np.int64)
    with torch.no_grad():
        out = module(torch.from_numpy(prefix), torch.from_numpy(padding_mask(PAST)), torch.from_numpy(encoder_mask))
    feeds = {"input_ids": rng.randint(0, VOCAB, size=(2, NEW)).astype(np.int64),
             "attention_mask": padding_mask(PAST + NEW), "encoder_attention_mask": encoder_mask}
    for name, t in zip(T5_KV_IN, out[1:]):
        feeds[name] = t.numpy().copy()
    return feeds


def blocks(*kinds, kv_heads=None, window=None, scale=None, past=None):
    """One block per entry of `kinds` ("window+padding" takes `window`; `past`: each reads its KV cache)."""
    return [block(k, HEADS, HEAD_DIM, kv_heads, window=window if k.startswith("window") else None, scale=scale,
                  past=past)
            for k in kinds]


DECODER_AXES = {"input_ids": SEQ, "attention_mask": SEQ, "logits": SEQ}
ENCODER_AXES = {"input_ids": SEQ, "attention_mask": SEQ, "last_hidden_state": SEQ}
IDS_MASK = ["input_ids", "attention_mask"]

BLOOM = (f"BLOOM as Hugging Face writes it (modeling_bloom 4.30-4.36, eager, use_cache): {SHAPE}; ALiBi from the "
         "attention_mask (slopes times (cumsum(mask) - 1) * mask, reshaped (B * H, 1, S)); one query_key_value "
         "viewed (B, T, H, 3, D), heads merged into the batch: q (B * H, T, D), k permuted to (B * H, D, T), "
         "v (B * H, T, D), returned as the presents; alibi.baddbmm(q, k, alpha=1/sqrt(D)) viewed (B, H, T, S), "
         "masked_fill with the bool causal mask (torch.empty with slice assignment) OR ~attention_mask, "
         "finfo.min; softmax in float32, viewed (B * H, T, S), bmm with v; tanh GELU, lm_head tied to the "
         "word embeddings")
BLOOM_PRESENTS = [f"present.{i}.{kind}" for i in range(LAYERS) for kind in ("key", "value")]
BLOOM_DECODE_AXES = dict(DECODER_AXES, attention_mask={0: "batch", 1: "total_seq"},
                         **{f"past_key_values.{i}.key": {0: "batch_x_heads", 2: "past_seq"} for i in range(LAYERS)},
                         **{f"past_key_values.{i}.value": {0: "batch_x_heads", 1: "past_seq"} for i in range(LAYERS)},
                         **{f"present.{i}.key": {0: "batch_x_heads", 2: "total_seq"} for i in range(LAYERS)},
                         **{f"present.{i}.value": {0: "batch_x_heads", 1: "total_seq"} for i in range(LAYERS)})
BLOOM_AXES = dict(DECODER_AXES, **{f"present.{i}.key": {0: "batch_x_heads", 2: "seq"} for i in range(LAYERS)},
                  **{f"present.{i}.value": {0: "batch_x_heads", 1: "seq"} for i in range(LAYERS)})
T5_DECODER = ("T5's decoder with its cache as Hugging Face writes it (modeling_t5 4.30-4.40, eager), as a "
              "decoder-with-past export carries it: self-attention over the past concatenated on axis 2, "
              "compute_bias(past + T, past + T) with causal buckets sliced to the last T rows, the decoder's "
              "extended mask (causal with a ones prefix for the cached keys, times attention_mask, (1 - m) * "
              "finfo.min) added into it and passed to layer 1; cross-attention on the cached encoder keys "
              "and values with a zeros bias plus the inverted encoder_attention_mask; no scale, "
              "softmax(scores.float()); T5LayerNorm, ReLU feed-forward, tied lm_head after d_model ** -0.5")
GPTJ = (f"GPT-J as Hugging Face writes it (modeling_gptj 4.30-4.40, eager): {SHAPE}; rotary on the first "
        f"{GPTJ_ROTARY_DIM} features of each head from the sinusoid table gathered by position_ids, sin and cos "
        "repeat_interleave'd by 2, rotate_every_two (stack((-x[..., 1::2], x[..., ::2]), -1).flatten(-2)); "
        "attention in float32: torch.where(bias[:, :, k-q:k, :k], w, torch.tensor(finfo.min)) THEN "
        "w / scale_attn (a 0-d tensor sqrt(head_dim)) THEN + (1 - attention_mask) * finfo.min, softmax, "
        "matmul V; parallel block attn(ln_1(x)) + mlp(ln_1(x)) + x, gelu_new, untied lm_head with bias")
FALCON = (f"Falcon-7B as Hugging Face writes it (modeling_falcon 4.33: multi_query, parallel_attn, no alibi, "
          f"bias-free FalconLinear x @ W.T): {SHAPE}, {HEADS} query heads and 1 K/V head; one query_key_value "
          "projection viewed (B, T, H + 2, D) and split by indexing; rotary cos/sin built in the graph from "
          "torch.arange(seq_len, dtype=float32) (a float Range on Cast(Shape)); the bool mask "
          "triu(ones(T, T), 1) expanded OR ~attention_mask[:, None, None, :] expanded, then in each layer "
          "(mask * 1.0).masked_fill(mask, -1e9) added to query @ key.T / sqrt(head_dim), softmax in float32, "
          "@ value with the one K/V head broadcast by MatMul; parallel attention + GELU MLP, LayerNorm, "
          "lm_head tied to the word embeddings")
DISTILBERT = (f"DistilBERT as Hugging Face writes it (modeling_distilbert 4.30-4.45, MultiHeadSelfAttention): "
              f"{SHAPE}, learned positions; q = q / sqrt(dim_per_head), scores = q @ k.transpose(2, 3), "
              "mask = (attention_mask == 0).view(bs, 1, 1, k_len).expand_as(scores) (an Expand to the shape of "
              "the scores), scores.masked_fill(mask, torch.tensor(finfo.min)), softmax, dropout, context; "
              "post-norm LayerNorm blocks, GELU FFN")
NEO = (f"GPT-Neo as Hugging Face writes it (modeling_gpt_neo 4.30-4.36, eager): {SHAPE}, attention_types "
       f"global then local, window_size {NEO_WINDOW}; each layer's bool buffer bias = tril(ones(64, 64)), the "
       "local layer's bias ^ tril(bias, {diag}); no scaling (scores are not divided by sqrt(head_dim)), "
       "float32 upcast, torch.where(bias[:, :, k-q:k, :k], w, torch.tensor(finfo.min)) + "
       "(1 - attention_mask) * finfo.min, softmax; learned positions, gelu_new, lm_head tied to wte")
CLIP = (f"CLIP's text encoder as Hugging Face writes it (modeling_clip 4.27-4.30): {SHAPE}; the causal mask "
        "torch.empty(B, T, T).fill_(finfo.min).triu_(1).unsqueeze(1) and the padding mask of _expand_mask "
        "(inverted = 1 - mask expanded, inverted.masked_fill(inverted.bool(), finfo.min)), each added in turn "
        "to the (B, H, T, T) view of scores torch.bmm(q * head_dim ** -0.5, k.transpose(1, 2)) on heads "
        "merged into the batch (B * H, T, D) and viewed back to (B * H, T, T); quick_gelu MLP, final "
        "LayerNorm, pooled output at the argmax of input_ids (the eos)")
NANO = (f"nanoGPT's CausalSelfAttention (karpathy/nanoGPT model.py, the path without "
        f"scaled_dot_product_attention): {SHAPE}; c_attn(x).split(n_embd, dim=2), att = (q @ k.transpose(-2, "
        "-1)) * (1.0 / math.sqrt(k.size(-1))), att.masked_fill(bias[:, :, :T, :T] == 0, float('-inf')) on "
        "a float tril buffer, softmax, att @ v; LayerNorm with bias, GELU MLP, tied lm_head, nanoGPT's "
        "_init_weights; the logits of every position")


NEOX = (f"GPT-NeoX / Pythia as Hugging Face writes it (modeling_gpt_neox 4.35, eager; the _attn of 4.31-4.35): "
        f"{SHAPE}; one query_key_value Linear viewed (B, T, H, 3 * D) and sliced into Q, K, V per head; partial "
        f"rotary (rotary_pct {NEOX_ROTARY_PCT}: the first {int(HEAD_DIM * NEOX_ROTARY_PCT)} of each head's "
        f"{HEAD_DIM} features) from the cos_cached/sin_cached buffers sliced to past + T and indexed by "
        "position_ids (arange(past, past + T)), rotate_half; K/V cat after the past on the sequence axis; q and "
        "k viewed (B * H, T, D), attn_scores = torch.zeros(B * H, T, S), torch.baddbmm(attn_scores, q, "
        "k.transpose(1, 2), beta=1.0, alpha=1 / norm_factor) (norm_factor a buffer sqrt(D)) viewed (B, H, T, "
        "S), the causal bool buffer sliced bias[:, :, S - T : S, :S], torch.where(causal_mask, scores, "
        "torch.tensor(finfo.min)), + (1 - attention_mask[:, None, None, :]) * finfo.min, softmax, matmul V; "
        "parallel residual mlp(post_attention_layernorm(x)) + attention(input_layernorm(x)) + x, GELU MLP, "
        "untied embed_out without bias")
PHI = (f"Phi (phi-2) as Hugging Face writes it (modeling_phi 4.37-4.38, eager): {SHAPE}; q_proj, k_proj, "
       f"v_proj and dense Linear layers with bias; partial rotary (partial_rotary_factor {PHI_ROTARY}: the "
       f"first {int(PHI_ROTARY * HEAD_DIM)} of each head's {HEAD_DIM} features) from the Mistral-style "
       "cos_cached[:past + T].to(dtype) indexed by position_ids (arange(past, past + T)); the past wrapped in a "
       "DynamicCache (from_legacy_cache, update's cat on the sequence axis, to_legacy_cache); scores "
       "torch.matmul(q.to(float32), k.to(float32).transpose(2, 3)) / sqrt(head_dim), where the upcast of the "
       "cached key is a float32 -> float32 Cast that the trace also writes as present.N.key; + the 4-D mask of "
       "_prepare_4d_causal_attention_mask (_make_causal_mask: full(finfo.min), masked_fill_(arange < arange + "
       "1), zeros for the past on the left, expanded; _expand_mask of attention_mask; combined by "
       "masked_fill(expanded.bool(), finfo.min)); softmax(dtype=torch.float32) (a Cast before the Softmax); "
       "parallel block attn(ln(x)) + mlp(ln(x)) + x, gelu_new, untied lm_head with bias, logits .float()")
DECODE_IO = (f"Decode: input_ids (B, T), attention_mask (B, past + T) and past_key_values.N.key/value (B, "
             f"{HEADS}, past, {HEAD_DIM}) in, logits and present.N.key/value (B, {HEADS}, past + T, {HEAD_DIM}) "
             f"out. Sample: past {PAST} (the presents of a real prefix), T {NEW}, batch row 1 left-padded by "
             f"{PAD}.")


def neo(window_offset):
    return lambda: hf_gpt_neo.GPTNeoForCausalLM(VOCAB, D_MODEL, HEADS, CTX, NEO_WINDOW, ("global", "local"),
                                                window_offset=window_offset)


def gptj_spec(name, export_note, dynamic_axes):
    return ModelSpec(name=name,
                     description=f"{GPTJ}. input_ids and attention_mask (B, T) in, logits out. Sample: T {GPTJ_T}, "
                     f"batch row 1 left-padded by {LEFT_PAD}. {export_note}",
                     build=lambda: hf_gptj.GPTJForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS, CTX, GPTJ_ROTARY_DIM),
                     make_inputs=decoder_inputs(GPTJ_T), input_names=IDS_MASK, output_names=["logits"],
                     dynamic_axes=dynamic_axes, attention_blocks=blocks("causal+padding", "causal+padding"),
                     expected_fusions=LAYERS, seed=101)


SPECS = [
    gptj_spec("hf_gptj_prefill",
              f"Exported with static shapes (batch 2, seq {GPTJ_T}): with every dim known torch 1.13 writes "
              "repeat_interleave as Split, Expand, Reshape and Concat (hf_gptj_prefill_dynamic has the Loop form). "
              "The scaling after the causal fill leaves hidden keys at finfo.min / 4, so a left-padded row's "
              "padded queries, which see no key, put their weight on the later keys.", {}),
    gptj_spec("hf_gptj_prefill_dynamic",
              "With dynamic batch and seq: torch 1.13 writes each repeat_interleave of sin and cos over a "
              "dynamic dim as SplitToSequence, a Loop of SequenceAt, Unsqueeze, Expand, Reshape and "
              "SequenceInsert, and ConcatFromSequence (one Loop for sin, one for cos); the importer reads each "
              "back as the Unsqueeze, Expand and Reshape it computes.", DECODER_AXES),
    ModelSpec(name="hf_falcon_decode",
              description=f"{FALCON}. {DECODE_IO} The past is viewed by _convert_to_rw_cache to (B * 1, past, "
              "D) and each layer concatenates it on axis 1 of that form; _expand_mask expands the padding to total "
              "- past rows; the presents are viewed back by _convert_cache_to_standard_format. The rotary cache "
              "is emptied before the export, as in a freshly loaded model.",
              build=lambda: hf_falcon.FalconForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS, use_cache=True),
              make_inputs=decode_inputs, input_names=IDS_MASK + KV_IN, output_names=["logits"] + KV_OUT,
              dynamic_axes=DECODE_AXES, attention_blocks=blocks("causal+padding", "causal+padding", kv_heads=1),
              expected_fusions=LAYERS, seed=111, save_model=tie_lm_head, write=export_with_empty_cache,
              extra={"past_length": PAST}),
    ModelSpec(name="hf_t5_decoder_with_past",
              description=f"{T5_DECODER}: {SHAPE}, the encoder's keys and values cached (length {T5_ENC}). "
              "input_ids (B, T), attention_mask (B, past + T), encoder_attention_mask (B, enc) and "
              "past_key_values.N.decoder.key/value (B, H, past, D) and .encoder.key/value (B, H, enc, D) in; "
              f"logits and present.N.decoder.key/value (B, H, past + T, D) out. Sample: past {PAST} (the cache "
              f"of a real prefix, row 1 left-padded by {PAD}), T {NEW}, encoder row 1 right-padded by 2.",
              build=lambda: hf_t5_decoder.T5DecoderWithPast(VOCAB, D_MODEL, HEADS, LAYERS, T5_ENC),
              make_inputs=t5_decode_inputs, input_names=IDS_MASK + ["encoder_attention_mask"] + T5_KV_IN,
              output_names=["logits"] + T5_KV_OUT, dynamic_axes=T5_AXES,
              attention_blocks=blocks("causal+padding+bias", "padding", "causal+padding+bias", "padding",
                                      scale=1.0),
              expected_fusions=2 * LAYERS, seed=112, extra={"past_length": PAST}),
    ModelSpec(name="hf_bloom_prefill",
              description=f"{BLOOM}. input_ids and attention_mask (B, T) in; logits and each layer's presents out: "
              f"keys (B * {HEADS}, {HEAD_DIM}, T) and values (B * {HEADS}, T, {HEAD_DIM}), the merged tensors "
              f"the attention reads. Sample: T {BLOOM_T}, batch row 1 left-padded by {LEFT_PAD}.",
              build=lambda: hf_bloom.BloomForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS),
              make_inputs=decoder_inputs(BLOOM_T), input_names=IDS_MASK, output_names=["logits"] + BLOOM_PRESENTS,
              dynamic_axes=BLOOM_AXES, attention_blocks=blocks("causal+padding+bias", "causal+padding+bias"),
              expected_fusions=LAYERS, seed=109, save_model=tie_lm_head),
    ModelSpec(name="hf_bloom_decode",
              description=f"{BLOOM}. input_ids and attention_mask (B, past + T), and each layer's merged past: "
              f"keys (B * {HEADS}, {HEAD_DIM}, past) and values (B * {HEADS}, past, {HEAD_DIM}), declared with "
              "their own batch symbol (batch_x_heads) and concatenated before the new keys (axis 2) and values "
              "(axis 1), the Concats being the presents. The causal mask with its past part (mask[:, :past] = "
              "False) and ALiBi over the whole attention_mask. "
              f"Sample: past {PAST} (the presents of a real prefix, row 1 padded by {PAD}), T {NEW}.",
              build=lambda: hf_bloom.BloomForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS),
              make_inputs=decode_inputs, input_names=IDS_MASK + KV_IN, output_names=["logits"] + BLOOM_PRESENTS,
              dynamic_axes=BLOOM_DECODE_AXES,
              attention_blocks=blocks("causal+padding+bias", "causal+padding+bias", past=False),
              expected_fusions=LAYERS, seed=110, save_model=tie_lm_head, extra={"past_length": PAST}),
    ModelSpec(name="hf_distilbert",
              description=f"{DISTILBERT}. input_ids and attention_mask (B, T) in, last_hidden_state out. Sample: "
              f"T {DISTILBERT_T}, batch row 1 right-padded by {RIGHT_PAD} (pad id 0).",
              build=lambda: hf_distilbert.DistilBertModel(VOCAB, D_MODEL, HEADS, LAYERS, CTX),
              make_inputs=encoder_inputs(DISTILBERT_T), input_names=IDS_MASK, output_names=["last_hidden_state"],
              dynamic_axes=ENCODER_AXES, attention_blocks=blocks("padding", "padding"), expected_fusions=LAYERS,
              seed=103),
    ModelSpec(name="hf_gpt_neo_prefill",
              description=f"{NEO.format(diag=-NEO_WINDOW)}: a query of the local layer sees itself and the "
              f"{NEO_WINDOW - 1} keys before it. input_ids and attention_mask (B, T) in, logits out. Sample: "
              f"T {NEO_T} (beyond the window), batch row 1 left-padded by {LEFT_PAD}.",
              build=neo(0), make_inputs=decoder_inputs(NEO_T), input_names=IDS_MASK, output_names=["logits"],
              dynamic_axes=DECODER_AXES,
              attention_blocks=(blocks("causal+padding", scale=1.0)
                                + blocks("window+padding", window=NEO_WINDOW, scale=1.0)),
              expected_fusions=LAYERS, seed=104, save_model=tie_lm_head),
    ModelSpec(name="hf_gpt_neo_window_off_by_one",
              description=f"{NEO.format(diag=-NEO_WINDOW + 1)}: the local window built one diagonal off "
              f"(tril(bias, -window_size + 1) where GPT-Neo writes -window_size), so a query of the local layer "
              f"sees itself and only {NEO_WINDOW - 2} keys before it: neither causal nor GPT-Neo's window of "
              f"{NEO_WINDOW}, but a correct window of {NEO_WINDOW - 1}, which is how it must fuse. input_ids and "
              f"attention_mask (B, T) in, logits out. Sample: T {NEO_T} (beyond the window), batch row 1 "
              f"left-padded by {LEFT_PAD}.",
              build=neo(1), make_inputs=decoder_inputs(NEO_T), input_names=IDS_MASK, output_names=["logits"],
              dynamic_axes=DECODER_AXES,
              attention_blocks=(blocks("causal+padding", scale=1.0)
                                + blocks("window+padding", window=NEO_WINDOW - 1, scale=1.0)),
              expected_fusions=LAYERS, seed=105, save_model=tie_lm_head),
    ModelSpec(name="hf_clip_text",
              description=f"{CLIP}. input_ids and attention_mask (B, T) in, last_hidden_state (B, T, {D_MODEL}) "
              f"and pooler_output (B, {D_MODEL}) out. Sample: T {CLIP_T}, batch row 1 right-padded by {RIGHT_PAD} "
              f"(pad id 0), each row's last real token the eos (id {VOCAB - 1}).",
              build=lambda: hf_clip.CLIPTextModel(VOCAB, D_MODEL, HEADS, LAYERS, CTX),
              make_inputs=encoder_inputs(CLIP_T, eos_last=True), input_names=IDS_MASK,
              output_names=["last_hidden_state", "pooler_output"],
              dynamic_axes=dict(ENCODER_AXES, pooler_output={0: "batch"}),
              attention_blocks=blocks("causal+padding", "causal+padding"), expected_fusions=LAYERS, seed=106),
    ModelSpec(name="nanogpt",
              description=f"{NANO}. idx (B, T) in, logits out; no attention_mask. Sample: T {NANO_T}.",
              build=lambda: nanogpt.GPT(VOCAB, D_MODEL, HEADS, LAYERS, CTX), make_inputs=nano_inputs,
              input_names=["idx"], output_names=["logits"], dynamic_axes={"idx": SEQ, "logits": SEQ},
              attention_blocks=blocks("causal", "causal"), expected_fusions=LAYERS, seed=107,
              save_model=tie_lm_head),
    ModelSpec(name="hf_gpt_neox_decode", description=f"{NEOX}. {DECODE_IO}",
              build=lambda: hf_gpt_neox.GPTNeoXForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS, CTX, NEOX_ROTARY_PCT),
              make_inputs=decode_inputs, input_names=IDS_MASK + KV_IN, output_names=["logits"] + KV_OUT,
              dynamic_axes=DECODE_AXES, attention_blocks=blocks("causal+padding", "causal+padding", past=True),
              expected_fusions=LAYERS, seed=108, extra={"past_length": PAST}),
    ModelSpec(name="hf_phi_decode", description=f"{PHI}. {DECODE_IO}",
              build=lambda: hf_phi.PhiForCausalLM(VOCAB, D_MODEL, HEADS, LAYERS, CTX, PHI_ROTARY),
              make_inputs=decode_inputs, input_names=IDS_MASK + KV_IN, output_names=["logits"] + KV_OUT,
              dynamic_axes=DECODE_AXES, attention_blocks=blocks("causal+padding", "causal+padding", past=True),
              expected_fusions=LAYERS, seed=109, extra={"past_length": PAST}),
]
