"""Trains the two SentencePiece models of tests/tokenizer/fixtures that exercise what
tokenizer.model files carry, with Debian's python3-sentencepiece, on this repository's
docs and the test corpus:

  t5/      Unigram in T5's layout (<pad>=0, </s>=1, <unk>=2, no BOS) with SentencePiece's
           default nmt_nfkc rule, so the model holds a precompiled_charsmap. Written as
           tokenizer.model and as the tokenizer.json Hugging Face's converter writes for T5
           (Precompiled normalizer, WhitespaceSplit + Metaspace, </s> appended).
  spm_bpe/ BPE with byte fallback in LLaMA's layout (<unk>=0, <s>=1, </s>=2), identity
           normalization, digits split: tokenizer.model only.

For every .model fixture (unigram/ too, which make_unigram.py trains) it writes
spm_ids.json: per corpus text, SentencePiece's ids and its decode of them.
Run from the repository root: /usr/bin/python3 tests/tokenizer/gen/make_spm.py
"""
import base64
import glob
import io
import json
import os

import sentencepiece as spm
from sentencepiece import sentencepiece_model_pb2 as model_pb2

here = os.path.dirname(os.path.abspath(__file__))
fixtures = os.path.join(here, "..", "fixtures")
corpus = json.load(open(os.path.join(here, "corpus.json"), encoding="utf-8"))


def training_lines():
    lines = []
    for path in sorted(glob.glob(os.path.join(here, "..", "..", "..", "docs", "*.md"))):
        lines += [l for l in open(path, encoding="utf-8").read().split("\n") if l.strip()]
    return lines + [l for t in corpus for l in t.split("\n") if l.strip()]


def train(name, **options):
    out = os.path.join(fixtures, name)
    os.makedirs(out, exist_ok=True)
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(training_lines()), model_writer=model,
                                   minloglevel=2, **options)
    open(os.path.join(out, "tokenizer.model"), "wb").write(model.getvalue())
    return model.getvalue()


def t5_json(blob):
    proto = model_pb2.ModelProto()
    proto.ParseFromString(blob)
    sp = spm.SentencePieceProcessor(model_proto=blob)
    vocab = [[p.piece, p.score] for p in proto.pieces]
    specials = [{"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False, "rstrip": False,
                 "normalized": False, "special": True} for i in (0, 1, 2)]
    charsmap = base64.b64encode(proto.normalizer_spec.precompiled_charsmap).decode()
    eos = {"SpecialToken": {"id": "</s>", "type_id": 0}}
    return {
        "version": "1.0",
        "added_tokens": specials,
        "normalizer": {"type": "Precompiled", "precompiled_charsmap": charsmap},
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "WhitespaceSplit"},
            {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True}]},
        "post_processor": {"type": "TemplateProcessing",
                           "single": [{"Sequence": {"id": "A", "type_id": 0}}, eos],
                           "pair": [{"Sequence": {"id": "A", "type_id": 0}}, eos, {"Sequence": {"id": "B", "type_id": 0}}, eos],
                           "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
        "decoder": {"type": "Metaspace", "replacement": "\u2581", "add_prefix_space": True},
        "model": {"type": "Unigram", "unk_id": 2, "vocab": vocab},
    }


def spm_ids(name):
    folder = os.path.join(fixtures, name)
    sp = spm.SentencePieceProcessor(model_file=os.path.join(folder, "tokenizer.model"))
    cases = []
    for t in corpus:
        ids = sp.encode(t)
        cases.append({"text": t, "ids": ids, "decoded": sp.decode(ids)})
    json.dump(cases, open(os.path.join(folder, "spm_ids.json"), "w", encoding="utf-8"), ensure_ascii=False, indent=1)
    print(name, sum(len(c["ids"]) for c in cases), "ids")


t5 = train("t5", model_type="unigram", vocab_size=1500, character_coverage=0.9995,
           normalization_rule_name="nmt_nfkc", pad_id=0, eos_id=1, unk_id=2, bos_id=-1)
json.dump(t5_json(t5), open(os.path.join(fixtures, "t5", "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
train("spm_bpe", model_type="bpe", vocab_size=1200, character_coverage=0.995, byte_fallback=True,
      split_digits=True, normalization_rule_name="identity", remove_extra_whitespaces=False,
      unk_id=0, bos_id=1, eos_id=2, pad_id=-1)
for name in ("unigram", "t5", "spm_bpe"):
    spm_ids(name)
