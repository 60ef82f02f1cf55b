"""Trains the small Unigram SentencePiece model of tests/tokenizer/fixtures/unigram
(T5's layout: <pad>=0, </s>=1, <unk>=2, no BOS; identity normalization) on the
project's own documentation and the test corpus, and writes it twice: as
tokenizer.model and as the tokenizer.json a converter would write (Unigram
vocabulary with scores, Metaspace, </s> appended). make_fixtures.mjs then
takes the reference ids of tokenizer.json; make_spm.py writes spm_ids.json,
SentencePiece's own ids for the .model. Run from the repository root: /usr/bin/python3 tests/tokenizer/gen/make_unigram.py
"""
import glob
import io
import json
import os

import sentencepiece as spm

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(here, "..", "fixtures", "unigram")
os.makedirs(out, exist_ok=True)
corpus = json.load(open(os.path.join(here, "corpus.json"), encoding="utf-8"))
lines = []
for path in sorted(glob.glob(os.path.join(here, "..", "..", "..", "docs", "*.md"))):
    lines += [l for l in open(path, encoding="utf-8").read().split("\n") if l.strip()]
lines += [l for t in corpus for l in t.split("\n") if l.strip()]

model = io.BytesIO()
spm.SentencePieceTrainer.train(
    sentence_iterator=iter(lines), model_writer=model, model_type="unigram", vocab_size=600,
    character_coverage=0.995, normalization_rule_name="identity", remove_extra_whitespaces=False,
    pad_id=0, eos_id=1, unk_id=2, bos_id=-1, byte_fallback=False, minloglevel=2)
open(os.path.join(out, "tokenizer.model"), "wb").write(model.getvalue())

sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
vocab = [[sp.id_to_piece(i), sp.get_score(i)] for i in range(sp.get_piece_size())]
tokenizer = {
    "version": "1.0",
    "added_tokens": [
        {"id": i, "content": sp.id_to_piece(i), "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": True} for i in (0, 1, 2)],
    "normalizer": None,
    "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                       "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}},
                                {"Sequence": {"id": "B", "type_id": 0}}, {"SpecialToken": {"id": "</s>", "type_id": 0}}],
                       "special_tokens": {"</s>": {"id": "</s>", "ids": [1], "tokens": ["</s>"]}}},
    "decoder": {"type": "Metaspace", "replacement": "\u2581", "prepend_scheme": "always", "split": True},
    "model": {"type": "Unigram", "unk_id": 2, "vocab": vocab, "byte_fallback": False},
}
json.dump(tokenizer, open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8"), ensure_ascii=False)
print("unigram:", sp.get_piece_size(), "pieces")
