"""attune.Tokenizer and attune.Generator from text, against the stored reference ids."""

import json
import lzma

import attune
import pytest


def test_encode_decode_match_the_reference_ids(root, tmp_path):
    folder = root / "tests" / "tokenizer" / "fixtures" / "gpt2"
    path = tmp_path / "tokenizer.json"
    path.write_bytes(lzma.decompress((folder / "tokenizer.json.xz").read_bytes()))
    tokenizer = attune.Tokenizer(str(path))
    assert tokenizer.vocab_size == 50257 and tokenizer.eos_ids == [50256]
    cases = json.loads((folder / "expected.json").read_text())["cases"]
    for case in cases:
        assert tokenizer.encode(case["text"]) == case["ids"], case["text"]
        assert tokenizer.decode(case["ids_no_special"]) == case["decoded"]


def test_errors_are_python_exceptions(root, tmp_path):
    with pytest.raises(FileNotFoundError):
        attune.Tokenizer(str(tmp_path / "missing.json"))
    bad = tmp_path / "tokenizer.json"
    bad.write_text('{"model": {"type": "Markov"}}')
    with pytest.raises(NotImplementedError, match='unsupported model type "Markov"'):
        attune.Tokenizer(str(bad))
    tokenizer = attune.Tokenizer(str(root / "tests" / "tokenizer" / "fixtures" / "tiny97" / "tokenizer.json"))
    with pytest.raises(ValueError, match="outside the tokenizer's vocabulary"):
        tokenizer.decode([97])


def test_generate_from_text_equals_generate_from_ids(root):
    model = str(root / "models" / "hf_gpt2_decode" / "model.onnx")
    tokenizer = str(root / "tests" / "tokenizer" / "fixtures" / "tiny97" / "tokenizer.json")
    generator = attune.Generator(model, tokenizer=tokenizer, threads=1)
    prompt = "Hello, world"
    ids = generator.tokenizer.encode(prompt)
    new_ids = generator.generate(ids, max_new_tokens=8, eos_id=96)
    text = generator.generate(prompt, max_new_tokens=8)
    assert text == generator.tokenizer.decode(new_ids, skip_special_tokens=True)
    assert generator.generate([prompt, "Hi"], max_new_tokens=4)[0] == generator.generate(prompt, max_new_tokens=4)
