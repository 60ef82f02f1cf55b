"""Generation over `attune serve`: Triton's generate extension (plain and server-sent events) and the
OpenAI-style completions API give `attune generate`'s greedy tokens, also with concurrent streams joining
and leaving the decode batch mid-generation; refusals get 400."""
import json
import os
import subprocess
import threading
import time

import pytest

from oip_client import CLI, SOURCE, Server, sse_events

GPT = os.path.join(SOURCE, "models", "hf_gpt2_pos_decode")
BERT = os.path.join(SOURCE, "models", "hf_distilbert")
MODEL = "hf_gpt2_pos_decode"
PROMPTS = [[47, 68, 25], [67, 83, 23, 92, 57, 14, 23], [72, 89, 42, 90, 8, 39, 68, 48, 7, 44, 0, 75], [5]]
LONGEST = 50

pytestmark = pytest.mark.skipif(not CLI, reason="ATTUNE_CLI not set")


@pytest.fixture(scope="module")
def server():
    s = Server([GPT, BERT], "--max-batch", "8")
    yield s
    assert s.stop() == 0, s.output()


@pytest.fixture(scope="module")
def reference():
    """`attune generate`'s greedy tokens for each prompt, alone."""
    out = {}
    for p in PROMPTS:
        r = subprocess.run([CLI, "generate", os.path.join(GPT, "model.onnx"), "--prompt-ids", ",".join(map(str, p)),
                            "--max-new-tokens", str(LONGEST), "--json", "--threads", "1"],
                           check=True, capture_output=True, text=True)
        out[tuple(p)] = json.loads(r.stdout.strip().splitlines()[-1])["generated_ids"][0]
    return out


def generate(server, prompt, n, **params):
    return server.json("POST", f"/v2/models/{MODEL}/generate",
                       {"input_ids": prompt, "parameters": dict(max_tokens=n, **params)})


def test_generate_equals_attune_generate(server, reference):
    for p in PROMPTS:
        status, doc = generate(server, p, 20)
        assert status == 200, doc
        assert doc["output_ids"] == reference[tuple(p)][:20]
        assert doc["model_name"] == MODEL and doc["text_output"] == ""
        assert doc["details"]["finish_reason"] == "length" and doc["details"]["generated_tokens"] == 20


def test_generate_stream_equals_attune_generate(server, reference):
    status, events = sse_events(server, f"/v2/models/{MODEL}/generate_stream",
                                {"input_ids": PROMPTS[1], "max_tokens": 15})
    assert status == 200
    ids = [t for e in events for t in e["output_ids"]]
    assert ids == reference[tuple(PROMPTS[1])][:15]
    # One event per token; the finish reason comes on the last token's event, or on an event of its own
    # when the generation ended after that token was sent.
    assert sum(len(e["output_ids"]) for e in events) == 15 and events[-1]["details"]["finish_reason"] == "length"
    assert all("details" not in e for e in events[:-1])


def test_eos_ends_a_generation(server, reference):
    first = reference[tuple(PROMPTS[0])][0]
    status, doc = generate(server, PROMPTS[0], 10, eos_id=first)
    assert status == 200 and doc["output_ids"] == [first] and doc["details"]["finish_reason"] == "eos_token"
    status, doc = server.json("POST", "/v1/completions",
                              {"model": MODEL, "prompt": PROMPTS[0], "max_tokens": 10, "temperature": 0,
                               "eos_id": first})
    assert status == 200 and doc["choices"][0]["finish_reason"] == "stop"


def test_completions_plain_and_streamed(server, reference):
    want = reference[tuple(PROMPTS[2])][:12]
    status, doc = server.json("POST", "/v1/completions",
                              {"model": MODEL, "prompt": PROMPTS[2], "max_tokens": 12, "temperature": 0})
    assert status == 200, doc
    assert doc["object"] == "text_completion" and doc["model"] == MODEL
    assert doc["choices"][0]["token_ids"] == want and doc["choices"][0]["finish_reason"] == "length"
    assert doc["usage"] == {"prompt_tokens": 12, "completion_tokens": 12, "total_tokens": 24}
    status, events = sse_events(server, "/v1/completions", {"model": MODEL, "prompt": PROMPTS[2], "max_tokens": 12,
                                                            "temperature": 0, "stream": True})
    assert status == 200 and events[-1] == "[DONE]"
    chunks = events[:-1]
    assert [t for e in chunks for t in e["choices"][0]["token_ids"]] == want
    assert chunks[-1]["choices"][0]["finish_reason"] == "length"
    assert all(e["choices"][0]["finish_reason"] is None for e in chunks[:-1])
    status, doc = server.json("GET", "/v1/models")
    assert status == 200 and sorted(m["id"] for m in doc["data"]) == sorted([MODEL, "hf_distilbert"])


def test_sampling_is_reproducible_and_equals_attune_generate(server):
    p = PROMPTS[1]
    r = subprocess.run([CLI, "generate", os.path.join(GPT, "model.onnx"), "--prompt-ids", ",".join(map(str, p)),
                        "--max-new-tokens", "16", "--temperature", "0.9", "--top-k", "20", "--seed", "7", "--json",
                        "--threads", "1"], check=True, capture_output=True, text=True)
    want = json.loads(r.stdout.strip().splitlines()[-1])["generated_ids"][0]
    for _ in range(2):
        status, doc = generate(server, p, 16, temperature=0.9, top_k=20, seed=7)
        assert status == 200 and doc["output_ids"] == want


def test_concurrent_streams_join_and_leave_mid_generation(server, reference):
    """Twelve generations of different lengths, started a few milliseconds apart over the three APIs,
    share the decode batch: each must get exactly the tokens it gets alone."""
    results, errors = {}, []

    def one(k):
        p = PROMPTS[k % len(PROMPTS)]
        n = [LONGEST, 7, 30, 3, 44, 12][k % 6]
        time.sleep(0.004 * k)
        kind = k % 3
        if kind == 0:
            status, doc = generate(server, p, n)
            ids = doc.get("output_ids") if status == 200 else None
        elif kind == 1:
            status, events = sse_events(server, f"/v2/models/{MODEL}/generate_stream", {"input_ids": p, "max_tokens": n})
            ids = [t for e in events for t in e["output_ids"]] if status == 200 else None
        else:
            status, events = sse_events(server, "/v1/completions",
                                        {"model": MODEL, "prompt": p, "max_tokens": n, "temperature": 0, "stream": True})
            ids = [t for e in events[:-1] for t in e["choices"][0]["token_ids"]] if status == 200 else None
        if ids != reference[tuple(p)][:n]:
            errors.append((k, status, ids, reference[tuple(p)][:n]))
        results[k] = ids

    for _ in range(3):
        threads = [threading.Thread(target=one, args=(k,)) for k in range(12)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not errors, errors[:3]
    _, _, metrics = server.request("GET", "/metrics")
    assert f'attune_generated_tokens_total{{model="{MODEL}"}}' in metrics.decode()


@pytest.mark.parametrize("path,doc", [
    (f"/v2/models/{MODEL}/generate", {"text_input": "hello"}),
    (f"/v2/models/{MODEL}/generate", {"input_ids": [1, 97]}),
    (f"/v2/models/{MODEL}/generate", {"input_ids": []}),
    (f"/v2/models/{MODEL}/generate", {"input_ids": ["a"]}),
    (f"/v2/models/{MODEL}/generate", {"input_ids": [1], "parameters": {"max_tokens": 0}}),
    (f"/v2/models/{MODEL}/generate", {"input_ids": [1], "parameters": {"top_p": 2}}),
    (f"/v2/models/{MODEL}/generate_stream", {"input_ids": [-1]}),
    ("/v2/models/hf_distilbert/generate", {"input_ids": [1]}),
    ("/v1/completions", {"model": MODEL, "prompt": "hello"}),
    ("/v1/completions", {"model": MODEL, "prompt": [1], "n": 2}),
    ("/v1/completions", {"prompt": [1]}),
])
def test_generation_refusals(server, path, doc):
    status, body = server.json("POST", path, doc)
    assert status == 400 and isinstance(body["error"], str), (status, body)


def test_generation_unknown_model_and_context(server):
    assert server.json("POST", "/v2/models/nope/generate", {"input_ids": [1]})[0] == 404
    assert server.json("POST", "/v1/completions", {"model": "nope", "prompt": [1]})[0] == 404
    status, doc = generate(server, PROMPTS[2], 60)  # 12 + 60 - 1 is beyond the context of 64
    assert status == 400 and "context" in doc["error"]
