"""Writes fixtures/tiny97/tokenizer.json: a byte-level BPE vocabulary of 97 ids
(the printable ASCII characters, space 'Ġ', newline 'Ċ' and <|endoftext|>) that
matches the 97-wide logits of the small test decoders in models/ (hf_gpt2_*,
gpt_kvcache), so that generation from text can be tested on them.
Run from the repository root: /usr/bin/python3 tests/tokenizer/gen/make_tiny.py
"""
import json
import os

vocab = {chr(c): c - ord("!") for c in range(ord("!"), ord("~") + 1)}
vocab["\u0120"] = 94  # GPT-2's byte-level symbol for the space
vocab["\u010a"] = 95  # and for the newline
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "tiny97")
os.makedirs(out, exist_ok=True)
json.dump({
    "version": "1.0",
    "added_tokens": [{"id": 96, "content": "<|endoftext|>", "single_word": False, "lstrip": False, "rstrip": False,
                      "normalized": False, "special": True}],
    "normalizer": None,
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "post_processor": None,
    "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
    "model": {"type": "BPE", "unk_token": None, "fuse_unk": False, "byte_fallback": False, "vocab": vocab, "merges": []},
}, open(os.path.join(out, "tokenizer.json"), "w"), ensure_ascii=False, indent=1)
