"""Text in and out of `attune serve`: a decoder with a tokenizer beside its file takes `text_input`
(generate extension) and string prompts (completions) and answers with text, streamed as whole UTF-8
characters, ended by the tokenizer's end-of-sequence id or a stop string. Every result must equal
`attune generate --prompt`, greedy and sampled with a seed, alone and with concurrent streams joining
and leaving. (Greedy, the small random model mostly repeats its last token; sampled, its tokens vary.)

The model is models/hf_gpt2_pos_decode (97 logits); its tokenizer is the 97-id byte-level test
vocabulary of tests/tokenizer/fixtures/tiny97 with five ids turned into the bytes of 'é' (C3 A9) and
'€' (E2 82 AC), so that random generations cut and complete multi-byte characters."""
import json
import os
import shutil
import subprocess
import threading
import time

import pytest

from oip_client import CLI, SOURCE, Server, sse_events

GPT = os.path.join(SOURCE, "models", "hf_gpt2_pos_decode")
TINY = os.path.join(SOURCE, "tests", "tokenizer", "fixtures", "tiny97", "tokenizer.json")
MODEL = "gpt_text"
PROMPTS = ["Hello, world", "The cat sat", "x", "Zebra 42! {ok}"]
NEW = 40
# How each mode is asked of the server and of `attune generate`.
MODES = {"greedy": ({}, []), "sampled": ({"temperature": 1.0, "seed": 2}, ["--temperature", "1", "--seed", "2"])}

pytestmark = pytest.mark.skipif(not CLI, reason="ATTUNE_CLI not set")


def byte_symbol(b):
    """GPT-2's byte-level symbol of a byte."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    if b in printable:
        return chr(b)
    others = [x for x in range(256) if x not in printable]
    return chr(256 + others.index(b))


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = tmp_path_factory.mktemp("models") / MODEL
    d.mkdir()
    shutil.copy(os.path.join(GPT, "model.onnx"), d / "model.onnx")
    with open(TINY) as f:
        tok = json.load(f)
    vocab = tok["model"]["vocab"]
    for char, byte in zip("`{|}~", (0xC3, 0xA9, 0xE2, 0x82, 0xAC)):
        vocab[byte_symbol(byte)] = vocab.pop(char)
    with open(d / "tokenizer.json", "w") as f:
        json.dump(tok, f, ensure_ascii=False)
    return str(d)


@pytest.fixture(scope="module")
def server(folder):
    s = Server([folder, GPT], "--max-batch", "8")
    yield s
    assert s.stop() == 0, s.output()


def cli_generate(folder, prompt, n=NEW, stop=None, mode="greedy"):
    args = [CLI, "generate", os.path.join(folder, "model.onnx"), "--prompt", prompt, "--max-new-tokens", str(n),
            "--json", "--threads", "1", *MODES[mode][1]]
    if stop:
        args += ["--stop", stop]
    r = subprocess.run(args, check=True, capture_output=True, text=True)
    out = json.loads(r.stdout.strip().splitlines()[-1])
    return out["text"][0], out["generated_ids"][0], out["prompt_ids"][0]


@pytest.fixture(scope="module")
def reference(folder):
    return {(p, mode): cli_generate(folder, p, mode=mode) for p in PROMPTS for mode in MODES}


def generate(server, prompt, n=NEW, mode="greedy", **params):
    return server.json("POST", f"/v2/models/{MODEL}/generate",
                       {"text_input": prompt, "parameters": dict(max_tokens=n, **MODES[mode][0], **params)})


def stream_doc(prompt, n=NEW, mode="greedy", **params):
    return {"text_input": prompt, "max_tokens": n, **MODES[mode][0], **params}


def test_the_fixture_exercises_multibyte_characters(reference):
    text = "".join(t for (_, mode), (t, _, _) in reference.items() if mode == "sampled")
    assert "é" in text or "€" in text, text  # seed 2 completes one on "x"


@pytest.mark.parametrize("mode", MODES)
def test_generate_text_equals_attune_generate(server, reference, mode):
    for p in PROMPTS:
        text, ids, _ = reference[p, mode]
        status, doc = generate(server, p, mode=mode)
        assert status == 200, doc
        assert doc["text_output"] == text and doc["output_ids"] == ids
        assert doc["details"]["finish_reason"] == ("eos_token" if ids[-1] == 96 else "length")


@pytest.mark.parametrize("mode", MODES)
def test_generate_stream_text_equals_attune_generate(server, reference, mode):
    for p in PROMPTS:
        text, ids, _ = reference[p, mode]
        status, events = sse_events(server, f"/v2/models/{MODEL}/generate_stream", stream_doc(p, mode=mode))
        assert status == 200, events
        assert "".join(e["text_output"] for e in events) == text
        assert [t for e in events for t in e["output_ids"]] == ids
        # Every piece is whole characters: a piece ending inside one would show U+FFFD the text lacks.
        assert all("\ufffd" not in e["text_output"] for e in events) or "\ufffd" in text


def test_completions_text_prompt_string_list_and_ids(server, reference):
    for p in PROMPTS[:2]:
        text, ids, prompt_ids = reference[p, "sampled"]
        sampling = dict(max_tokens=NEW, **MODES["sampled"][0])
        for prompt in (p, [p], prompt_ids):
            status, doc = server.json("POST", "/v1/completions", {"model": MODEL, "prompt": prompt, **sampling})
            assert status == 200, doc
            assert doc["choices"][0]["text"] == text and doc["choices"][0]["token_ids"] == ids
            assert doc["usage"]["prompt_tokens"] == len(prompt_ids)
        status, events = sse_events(server, "/v1/completions", {"model": MODEL, "prompt": p, "stream": True, **sampling})
        assert status == 200 and events[-1] == "[DONE]"
        assert "".join(e["choices"][0]["text"] for e in events[:-1]) == text


def test_stop_strings_equal_attune_generate(server, folder, reference):
    checked = 0
    for p in PROMPTS:
        full = reference[p, "sampled"][0]
        if len(full) < 8:
            continue
        stop = full[4:6]
        want_text, want_ids, _ = cli_generate(folder, p, stop=stop, mode="sampled")
        assert len(want_text) < len(full) and full.startswith(want_text)
        status, doc = generate(server, p, mode="sampled", stop=stop)
        assert status == 200 and doc["text_output"] == want_text and doc["output_ids"] == want_ids
        assert doc["details"]["finish_reason"] == "stop"
        status, events = sse_events(server, f"/v2/models/{MODEL}/generate_stream",
                                    stream_doc(p, mode="sampled", stop=[stop, "never seen"]))
        assert status == 200 and "".join(e["text_output"] for e in events) == want_text
        status, doc = server.json("POST", "/v1/completions", {"model": MODEL, "prompt": p, "max_tokens": NEW,
                                                              "stop": stop, **MODES["sampled"][0]})
        assert status == 200 and doc["choices"][0]["text"] == want_text
        assert doc["choices"][0]["finish_reason"] == "stop"
        checked += 1
    assert checked >= 2


def test_concurrent_text_streams_join_and_leave(server, reference):
    errors = []

    def one(k):
        p = PROMPTS[k % len(PROMPTS)]
        mode = "sampled" if k % 2 else "greedy"
        text, ids, _ = reference[p, mode]
        n = [NEW, 5, 23, 2, 31, 11][k % 6]
        time.sleep(0.004 * k)
        if k % 3 == 0:
            status, doc = generate(server, p, n, mode=mode)
            got = (doc.get("output_ids"), doc.get("text_output")) if status == 200 else None
        elif k % 3 == 1:
            status, events = sse_events(server, f"/v2/models/{MODEL}/generate_stream", stream_doc(p, n, mode))
            got = ([t for e in events for t in e["output_ids"]], "".join(e["text_output"] for e in events))
        else:
            status, events = sse_events(server, "/v1/completions", {"model": MODEL, "prompt": p, "max_tokens": n,
                                                                    "temperature": 0, "stream": True,
                                                                    **MODES[mode][0]})
            got = ([t for e in events[:-1] for t in e["choices"][0]["token_ids"]],
                   "".join(e["choices"][0]["text"] for e in events[:-1]))
        want_ids = ids[:n]
        # A cut generation's text is its own ids' text: the full text starts with it, except a
        # character the cut splits, which the shorter one shows as U+FFFD.
        if got is None or got[0] != want_ids or not (got[1] == text if n >= len(ids) else
                                                      text.startswith(got[1].rstrip("\ufffd"))):
            errors.append((k, status, got, want_ids))

    for _ in range(2):
        threads = [threading.Thread(target=one, args=(k,)) for k in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[:3]


@pytest.mark.parametrize("path,doc,message", [
    ("/v2/models/hf_gpt2_pos_decode/generate", {"text_input": "hello"}, "has no tokenizer"),
    ("/v2/models/hf_gpt2_pos_decode/generate", {"input_ids": [1], "stop": "x"}, "has no tokenizer"),
    ("/v1/completions", {"model": "hf_gpt2_pos_decode", "prompt": "hello"}, "has no tokenizer"),
    (f"/v2/models/{MODEL}/generate", {"text_input": 5}, "must be a string"),
    (f"/v2/models/{MODEL}/generate", {"text_input": ""}, "encodes to no tokens"),
    (f"/v2/models/{MODEL}/generate", {"text_input": "a", "stop": [""]}, "stop"),
    (f"/v2/models/{MODEL}/generate", {"text_input": "a", "stop": 3}, "stop"),
    ("/v1/completions", {"model": MODEL, "prompt": ["a", "b"]}, "one prompt"),
])
def test_text_refusals(server, path, doc, message):
    status, body = server.json("POST", path, doc)
    assert status == 400 and message in body["error"], (status, body)


def test_invalid_utf8_text_is_refused(server):
    body = b'{"text_input": "caf\xc3", "parameters": {"max_tokens": 2}}'
    status, _, data = server.request("POST", f"/v2/models/{MODEL}/generate", body,
                                     {"Content-Type": "application/json"})
    assert status == 400 and b"error" in data
