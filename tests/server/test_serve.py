"""`attune serve` against a client written from the Open Inference Protocol: every endpoint, outputs
bit for bit against `attune run`, the binary extension, hostile requests, metrics and the access log,
concurrency over two models with RSS watched, and a drained shutdown."""
import json
import os
import subprocess
import tempfile
import threading

import numpy as np
import pytest

from oip_client import (CLI, SOURCE, Server, decode_response, infer_binary, infer_json, json_input)

BERT = os.path.join(SOURCE, "models", "hf_distilbert")
GPT = os.path.join(SOURCE, "models", "hf_gpt2_pos_decode")

pytestmark = pytest.mark.skipif(not CLI, reason="ATTUNE_CLI not set")


def sample_inputs(folder):
    d = os.path.join(folder, "inputs")
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def cli_outputs(folder, inputs):
    """What `attune run` writes for the same inputs."""
    with tempfile.TemporaryDirectory() as tmp:
        args = [CLI, "run", os.path.join(folder, "model.onnx"), "--threads", "1", "--output-dir", tmp]
        for name, array in inputs.items():
            path = os.path.join(tmp, name + ".in.npy")
            np.save(path, array)
            args += ["--input", f"{name}={path}"]
        subprocess.run(args, check=True, capture_output=True)
        return {f[:-4]: np.load(os.path.join(tmp, f)) for f in os.listdir(tmp)
                if f.endswith(".npy") and not f.endswith(".in.npy")}


@pytest.fixture(scope="module")
def server():
    s = Server([BERT, GPT], "--max-concurrency", "2", "--max-queue", "64", "--max-request-mb", "8",
               "--max-input-mb", "4")
    yield s
    assert s.stop() == 0, s.output()


@pytest.fixture(scope="module")
def expected():
    return {m: cli_outputs(folder, sample_inputs(folder)) for m, folder in
            (("hf_distilbert", BERT), ("hf_gpt2_pos_decode", GPT))}


def same_bits(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_health_and_server_metadata(server):
    assert server.json("GET", "/v2/health/live") == (200, {"live": True})
    assert server.json("GET", "/v2/health/ready") == (200, {"ready": True})
    status, meta = server.json("GET", "/v2")
    assert status == 200 and meta["name"] == "attune" and "binary_tensor_data" in meta["extensions"]


def test_model_metadata_and_ready(server):
    status, meta = server.json("GET", "/v2/models/hf_distilbert")
    assert status == 200 and meta["name"] == "hf_distilbert" and meta["versions"] == ["1"]
    assert meta["inputs"] == [{"name": "input_ids", "datatype": "INT64", "shape": [-1, -1]},
                              {"name": "attention_mask", "datatype": "INT64", "shape": [-1, -1]}]
    assert meta["outputs"] == [{"name": "last_hidden_state", "datatype": "FP32", "shape": [-1, -1, 64]}]
    assert server.json("GET", "/v2/models/hf_distilbert/versions/1")[1] == meta
    assert server.json("GET", "/v2/models/hf_distilbert/ready") == (200, {"name": "hf_distilbert", "ready": True})
    assert server.json("GET", "/v2/models/hf_distilbert/versions/1/ready")[0] == 200
    assert server.json("GET", "/v2/models/hf_distilbert/versions/7")[0] == 404
    status, err = server.json("GET", "/v2/models/nope")
    assert status == 404 and "nope" in err["error"]
    status, err = server.json("GET", "/v2/models/nope/ready")
    assert status == 404 and "error" in err
    status, index = server.json("POST", "/v2/repository/index", {})
    assert status == 200 and sorted(m["name"] for m in index) == ["hf_distilbert", "hf_gpt2_pos_decode"]


@pytest.mark.parametrize("model,folder", [("hf_distilbert", BERT), ("hf_gpt2_pos_decode", GPT)])
def test_infer_json_and_binary_equal_attune_run(server, expected, model, folder):
    inputs = sample_inputs(folder)
    want = expected[model]
    status, headers, body = infer_json(server, model, inputs)
    assert status == 200, body
    doc, got = decode_response(headers, body)
    assert doc["model_name"] == model and doc["id"] == "req-1" and doc["model_version"] == "1"
    assert sorted(got) == sorted(want)
    for name in want:
        assert same_bits(got[name], want[name]), name
    status, headers, body = infer_binary(server, model, inputs)
    assert status == 200, body
    assert headers["Content-Type"] == "application/octet-stream"
    _, got = decode_response(headers, body)
    for name in want:
        assert same_bits(got[name], want[name]), name


def test_requested_outputs(server, expected):
    inputs = sample_inputs(GPT)
    want = expected["hf_gpt2_pos_decode"]
    status, headers, body = infer_json(server, "hf_gpt2_pos_decode", inputs, ["present.1.value", "logits"], True)
    assert status == 200, body
    doc, got = decode_response(headers, body)
    assert [o["name"] for o in doc["outputs"]] == ["present.1.value", "logits"]
    assert all("data" not in o for o in doc["outputs"])
    assert same_bits(got["logits"], want["logits"]) and same_bits(got["present.1.value"], want["present.1.value"])
    status, headers, body = infer_json(server, "hf_gpt2_pos_decode", inputs, ["logits"], False)
    doc, got = decode_response(headers, body)
    assert status == 200 and len(doc["outputs"]) == 1 and same_bits(got["logits"], want["logits"])
    status, _, body = infer_json(server, "hf_gpt2_pos_decode", inputs, ["nope"])
    assert status == 400 and "nope" in json.loads(body)["error"]


def post(server, model, body, headers=None):
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    status, hdrs, data = server.request("POST", f"/v2/models/{model}/infer", body, h)
    return status, hdrs, data


def bert_doc(**overrides):
    inputs = sample_inputs(BERT)
    doc = {"inputs": [json_input(n, a) for n, a in inputs.items()]}
    for k, v in overrides.items():
        doc["inputs"][0][k] = v
    return doc


@pytest.mark.parametrize("case", [
    "truncated", "not_json", "invalid_utf8", "deep_nesting", "wrong_datatype", "unknown_datatype", "wrong_rank",
    "wrong_count", "huge_shape", "negative_dim", "string_elements", "out_of_range", "unknown_input",
    "missing_input", "bad_header_length", "binary_size_too_big", "trailing_binary", "not_object"])
def test_hostile_requests_get_400(server, case):
    good = json.dumps(bert_doc()).encode()
    headers = {}
    body = {
        "truncated": good[:len(good) // 2],
        "not_json": b"hello",
        "invalid_utf8": b'{"id": "\xff\xfe", "inputs": []}',
        "deep_nesting": b"[" * 100000 + b"]" * 100000,
        "wrong_datatype": json.dumps(bert_doc(datatype="FP32")).encode(),
        "unknown_datatype": json.dumps(bert_doc(datatype="COMPLEX")).encode(),
        "wrong_rank": json.dumps(bert_doc(shape=[24])).encode(),
        "wrong_count": json.dumps(bert_doc(shape=[2, 13])).encode(),
        "huge_shape": json.dumps(bert_doc(shape=[2**40, 2**40])).encode(),
        "negative_dim": json.dumps(bert_doc(shape=[-2, 12])).encode(),
        "string_elements": json.dumps(bert_doc(data=["a"] * 24)).encode(),
        "out_of_range": json.dumps(bert_doc(data=[2**70] * 24)).encode(),
        "unknown_input": json.dumps(bert_doc(name="nope")).encode(),
        "missing_input": json.dumps({"inputs": bert_doc()["inputs"][:1]}).encode(),
        "not_object": b"[1, 2]",
    }.get(case)
    if case == "bad_header_length":
        body, headers = good, {"Inference-Header-Content-Length": "99999999"}
    if case in ("binary_size_too_big", "trailing_binary"):
        doc = bert_doc()
        doc["inputs"][0].pop("data")
        doc["inputs"][0]["parameters"] = {"binary_data_size": 10**12 if case == "binary_size_too_big" else 192}
        head = json.dumps(doc).encode()
        body = head + b"\0" * (192 + (8 if case == "trailing_binary" else 0))
        headers = {"Inference-Header-Content-Length": str(len(head))}
    status, _, data = post(server, "hf_distilbert", body, headers)
    assert status == 400, (case, data)
    assert isinstance(json.loads(data)["error"], str)


def test_unknown_model_and_endpoint_and_size_limits(server):
    status, _, data = post(server, "nope", json.dumps(bert_doc()).encode())
    assert status == 404 and "nope" in json.loads(data)["error"]
    status, _, data = server.request("GET", "/v2/nothing/here")
    assert status == 404 and "error" in json.loads(data)
    status, _, _ = post(server, "hf_distilbert", b"[" + b"0," * (5 << 20) + b"0]")
    assert status == 413  # above --max-request-mb 8
    doc = {"inputs": [{"name": "input_ids", "datatype": "INT64", "shape": [1, 1 << 20],
                       "parameters": {"binary_data_size": 8 << 20}}]}
    status, _, data = post(server, "hf_distilbert", json.dumps(doc).encode())
    assert status == 400 and "limit" in json.loads(data)["error"]  # above --max-input-mb 4


def test_metrics(server):
    infer_json(server, "hf_distilbert", sample_inputs(BERT))
    status, headers, body = server.request("GET", "/metrics")
    text = body.decode()
    assert status == 200 and headers["Content-Type"].startswith("text/plain")
    assert 'attune_requests_total{model="hf_distilbert",endpoint="infer"}' in text
    assert 'attune_request_duration_seconds_bucket{model="hf_distilbert",endpoint="infer",le="+Inf"}' in text
    assert "attune_queue_depth 0" in text
    assert "# TYPE attune_request_errors_total counter" in text


def test_access_log_is_json_lines(server):
    server.request("GET", "/v2/health/live")
    lines = [line for line in server.output().splitlines() if line.startswith("{")]
    records = [json.loads(line) for line in lines]
    assert any(r["path"] == "/v2/health/live" and r["status"] == 200 and r["endpoint"] == "health_live"
               for r in records)
    assert all({"time", "method", "status", "ms", "model"} <= set(r) for r in records)


def test_concurrent_clients_over_two_models(server, expected):
    bert, gpt = sample_inputs(BERT), sample_inputs(GPT)
    errors = []

    def client(k):
        for i in range(50):
            model, inputs = (("hf_distilbert", bert) if (i + k) % 2 else ("hf_gpt2_pos_decode", gpt))
            status, headers, body = infer_binary(server, model, inputs) if i % 3 else infer_json(server, model, inputs)
            if status != 200:
                errors.append((status, body[:200]))
                continue
            _, got = decode_response(headers, body)
            for name, want in expected[model].items():
                if not same_bits(got[name], want):
                    errors.append((model, name))

    def round_of_clients():
        threads = [threading.Thread(target=client, args=(k,)) for k in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    round_of_clients()
    rss_after_first = server.rss_kib()
    round_of_clients()
    rss_after_second = server.rss_kib()
    assert not errors, errors[:5]
    # A leak of even 1 KiB per request would show as 800 KiB; allocator noise stays far below 16 MiB.
    assert rss_after_second - rss_after_first < 16 * 1024, (rss_after_first, rss_after_second)


def test_full_queue_gets_503_with_retry_after():
    s = Server([BERT], "--max-concurrency", "1", "--max-queue", "0", "--access-log", "off")
    try:
        results = []
        inputs = {"input_ids": np.zeros((64, 64), np.int64), "attention_mask": np.ones((64, 64), np.int64)}

        def client():
            for _ in range(5):
                status, headers, _ = infer_binary(s, "hf_distilbert", inputs)
                results.append((status, headers.get("Retry-After")))

        threads = [threading.Thread(target=client) for _ in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert {st for st, _ in results} <= {200, 503}
        assert (200, None) in results
        assert all(ra == "1" for st, ra in results if st == 503)
    finally:
        assert s.stop() == 0


def test_sigterm_drains_in_flight_requests():
    """Requests the server has taken (running or queued) when SIGTERM arrives all get their answers; the
    server exits 0. Connections it had not yet read may be refused (it stops accepting)."""
    import re
    import time
    s = Server([BERT], "--max-concurrency", "1", "--max-queue", "32", "--access-log", "off")
    inputs = {"input_ids": np.zeros((64, 64), np.int64), "attention_mask": np.ones((64, 64), np.int64)}
    results = []

    def client():
        try:
            status, _, body = infer_binary(s, "hf_distilbert", inputs)
            results.append((status, len(body)))
        except OSError as e:  # not accepted before the listener closed
            results.append(("refused", str(e)))

    threads = [threading.Thread(target=client) for _ in range(8)]
    for t in threads:
        t.start()
    taken = 0
    deadline = time.time() + 10
    while time.time() < deadline and len(results) < 8:
        text = s.request("GET", "/metrics")[2].decode()
        queued = int(re.search(r"^attune_queue_depth (\d+)", text, re.M).group(1))
        running = int(re.search(r"^attune_requests_in_flight (\d+)", text, re.M).group(1))
        if queued >= 1:
            taken = queued + running
            break
    code = s.stop()
    for t in threads:
        t.join()
    assert code == 0, s.output()
    answered = [r for r in results if r[0] == 200]
    assert len(results) == 8 and all(r[0] in (200, "refused") for r in results), results
    assert len(answered) >= taken, (taken, results)
    assert "draining" in s.output()
