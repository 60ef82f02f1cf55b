#!/usr/bin/python3
"""Greedy generation references for the KV-cache models, computed by PyTorch.

usage: /usr/bin/python3 models/gen/generate_reference.py [--out MODELS_DIR]
Rebuilds each module with the seed its model was exported from (catalog_gpt / catalog_hf), runs
the greedy loop with the KV cache (prompt once, then one token per step feeding the presents back)
and writes MODEL_DIR/generate_reference.json:
  {"max_new_tokens": N, "cases": [{"prompts": [[ids]...], "generated_ids": [[ids]...],
                                   "min_margin": top-1 minus top-2 logit, smallest over the run}]}
A case with several prompts is one left-padded batch (attention_mask, and position ids
cumsum(mask) - 1 for the model that takes them), as Hugging Face's generate() runs it.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_gpt  # noqa: E402
import catalog_hf  # noqa: E402
import gpt  # noqa: E402

MAX_NEW = 20


def spec_named(specs, name):
    return next(s for s in specs if s.name == name)


def build(spec):
    torch.manual_seed(spec.seed)
    return spec.build().eval()


def greedy(step, prompts, max_new):
    """step(ids (B, T) int64, mask (B, total), positions (B, T), past or None) -> (logits, past).
    Left-pads the prompts (filler id 0), returns per prompt its new ids and the smallest margin."""
    batch, longest = len(prompts), max(len(p) for p in prompts)
    pad = [longest - len(p) for p in prompts]
    ids = np.zeros((batch, longest), dtype=np.int64)
    for r, p in enumerate(prompts):
        ids[r, pad[r]:] = p
    mask = np.ones((batch, longest), dtype=np.int64)
    for r in range(batch):
        mask[r, :pad[r]] = 0
    positions = np.maximum(np.cumsum(mask, axis=1) - 1, 0)
    out = [[] for _ in prompts]
    margin = float("inf")
    past = None
    with torch.no_grad():
        logits, past = step(torch.from_numpy(ids), torch.from_numpy(mask), torch.from_numpy(positions), past)
        for i in range(max_new):
            last = logits[:, -1, :]
            top2 = torch.topk(last, 2, dim=-1).values
            margin = min(margin, float((top2[:, 0] - top2[:, 1]).min()))
            nxt = torch.argmax(last, dim=-1)
            for r in range(batch):
                out[r].append(int(nxt[r]))
            if i + 1 == max_new:
                break
            mask = np.concatenate([mask, np.ones((batch, 1), dtype=np.int64)], axis=1)
            positions = positions[:, -1:] + 1
            logits, past = step(nxt.view(batch, 1), torch.from_numpy(mask), torch.from_numpy(positions), past)
    return out, margin


def gpt_kvcache_step(module):
    def step(ids, mask, positions, past):
        logits, presents = module.run(ids, past if past is not None else [None] * catalog_gpt.LAYERS)
        return logits, presents
    return step


def hf_step(module, with_positions):
    def step(ids, mask, positions, past):
        flat = () if past is None else past
        out = module(ids, mask, positions, *flat) if with_positions else module(ids, mask, *flat)
        return out[0], tuple(out[1:])
    return step


def prompts_for(rng, vocab, lengths):
    return [rng.randint(0, vocab, size=n).astype(np.int64).tolist() for n in lengths]


def cases(step, vocab, seed, batched):
    rng = np.random.RandomState(seed)
    result = []
    singles = prompts_for(rng, vocab, (3, 7, 12))
    for p in singles:
        ids, margin = greedy(step, [p], MAX_NEW)
        result.append({"prompts": [p], "generated_ids": ids, "min_margin": margin})
    if batched:
        ids, margin = greedy(step, singles, MAX_NEW)
        result.append({"prompts": singles, "generated_ids": ids, "min_margin": margin})
    return result


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(here), help="models directory")
    args = ap.parse_args()
    torch.set_num_threads(1)
    models = [
        ("gpt_kvcache", gpt_kvcache_step(build(spec_named(catalog_gpt.SPECS, "gpt_kvcache"))),
         catalog_gpt.VOCAB, False),
        ("hf_gpt2_decode", hf_step(build(spec_named(catalog_hf.SPECS, "hf_gpt2_decode")), False),
         catalog_hf.VOCAB, False),
        ("hf_gpt2_pos_decode", hf_step(build(spec_named(catalog_hf.SPECS, "hf_gpt2_pos_decode")), True),
         catalog_hf.VOCAB, True),
        ("hf_llama_decode", hf_step(build(spec_named(catalog_hf.SPECS, "hf_llama_decode")), False),
         catalog_hf.VOCAB, False),
    ]
    for name, step, vocab, batched in models:
        ref = {"max_new_tokens": MAX_NEW, "cases": cases(step, vocab, 7, batched)}
        path = os.path.join(args.out, name, "generate_reference.json")
        with open(path, "w") as f:
            json.dump(ref, f, indent=1)
            f.write("\n")
        margins = ", ".join(f"{c['min_margin']:.2e}" for c in ref["cases"])
        print(f"wrote {path} (min margins {margins})")


if __name__ == "__main__":
    main()
