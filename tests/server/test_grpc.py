"""`attune serve` over gRPC (inference.GRPCInferenceService) against a client built from the .proto
written from the spec: every RPC, outputs bit for bit equal to REST's (raw and typed contents,
requested outputs, parameters), status codes as REST's errors map to them, hostile messages."""
import json
import os
import struct

import grpc
import numpy as np
import pytest

from oip_client import CLI, SOURCE, Server, decode_response, infer_binary, NAMES, DATATYPES

BERT = os.path.join(SOURCE, "models", "hf_distilbert")
GPT = os.path.join(SOURCE, "models", "hf_gpt2_pos_decode")
MODEL = "hf_distilbert"

pytestmark = pytest.mark.skipif(not CLI or not os.environ.get("ATTUNE_GRPC_DESCRIPTOR"),
                                reason="ATTUNE_CLI or ATTUNE_GRPC_DESCRIPTOR not set")


@pytest.fixture(scope="module")
def server():
    s = Server([BERT, GPT], "--max-concurrency", "2", "--max-request-mb", "2", "--max-input-mb", "1")
    yield s
    assert s.stop() == 0, s.output()


@pytest.fixture(scope="module")
def client(server):
    from grpc_client import GrpcClient
    c = GrpcClient(server.grpc_port)
    yield c
    c.close()


def sample_inputs(folder=BERT):
    d = os.path.join(folder, "inputs")
    return {f[:-4]: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d)) if f.endswith(".npy")}


def raw_request(client, inputs, model=MODEL, **fields):
    req = client.message("ModelInferRequest", model_name=model, **fields)
    for name, a in inputs.items():
        t = req.inputs.add(name=name, datatype=NAMES[a.dtype], shape=list(a.shape))
    for a in inputs.values():
        req.raw_input_contents.append(np.ascontiguousarray(a).tobytes())
    return req


def raw_outputs(response):
    out = {}
    for o, raw in zip(response.outputs, response.raw_output_contents):
        out[o.name] = np.frombuffer(raw, dtype=DATATYPES[o.datatype]).reshape(list(o.shape))
    return out


def rest_outputs(server, inputs):
    status, headers, body = infer_binary(server, MODEL, inputs)
    assert status == 200, body
    return decode_response(headers, body)[1]


def code_of(call):
    with pytest.raises(grpc.RpcError) as e:
        call()
    return e.value.code(), e.value.details()


def test_health_and_server_metadata(server, client):
    assert client.call("ServerLive").live
    assert client.call("ServerReady").ready
    meta = client.call("ServerMetadata")
    status, rest = server.json("GET", "/v2")
    assert status == 200
    assert (meta.name, meta.version, list(meta.extensions)) == (rest["name"], rest["version"], rest["extensions"])


def test_model_ready_and_metadata_equal_rest(server, client):
    assert client.call("ModelReady", name=MODEL).ready
    assert client.call("ModelReady", name=MODEL, version="1").ready
    for model in (MODEL, "hf_gpt2_pos_decode"):
        meta = client.call("ModelMetadata", name=model)
        status, rest = server.json("GET", f"/v2/models/{model}")
        assert status == 200
        assert meta.name == rest["name"] and list(meta.versions) == rest["versions"]
        assert meta.platform == rest["platform"]
        for got, want in ((meta.inputs, rest["inputs"]), (meta.outputs, rest["outputs"])):
            assert [(t.name, t.datatype, list(t.shape)) for t in got] == \
                   [(t["name"], t["datatype"], t["shape"]) for t in want]


def test_unknown_model_and_version(client):
    for rpc, fields in (("ModelReady", {"name": "nope"}), ("ModelMetadata", {"name": "nope"}),
                        ("ModelMetadata", {"name": MODEL, "version": "7"})):
        code, details = code_of(lambda: client.call(rpc, **fields))
        assert code == grpc.StatusCode.NOT_FOUND, details
    code, details = code_of(lambda: client.call("ModelInfer", raw_request(client, sample_inputs(), model="nope")))
    assert code == grpc.StatusCode.NOT_FOUND and "unknown model 'nope'" in details


def test_infer_raw_equals_rest_bit_for_bit(server, client):
    inputs = sample_inputs()
    response = client.call("ModelInfer", raw_request(client, inputs, id="g-1"))
    assert response.model_name == MODEL and response.model_version == "1" and response.id == "g-1"
    got, want = raw_outputs(response), rest_outputs(server, inputs)
    assert list(got) == list(want)
    for name in want:
        assert got[name].dtype == want[name].dtype and got[name].tobytes() == want[name].tobytes()
    assert all(not o.HasField("contents") for o in response.outputs)


def test_infer_typed_contents_equal_rest(server, client):
    inputs = sample_inputs()
    req = client.message("ModelInferRequest", model_name=MODEL)
    req.parameters["binary_data_output"].bool_param = False
    for name, a in inputs.items():
        t = req.inputs.add(name=name, datatype="INT64", shape=list(a.shape))
        t.contents.int64_contents.extend(a.ravel().tolist())
    response = client.call("ModelInfer", req)
    want = rest_outputs(server, inputs)
    assert len(response.raw_output_contents) == 0
    for o in response.outputs:
        assert o.datatype == "FP32"
        got = np.array(o.contents.fp32_contents, dtype=np.float32).reshape(list(o.shape))
        assert got.tobytes() == want[o.name].tobytes()


def test_requested_outputs_and_parameters(server, client):
    inputs = sample_inputs()
    status, meta = server.json("GET", f"/v2/models/{MODEL}")
    names = [o["name"] for o in meta["outputs"]]
    req = raw_request(client, inputs)
    req.outputs.add(name=names[-1])
    req.parameters["timeout"].int64_param = 30_000_000
    response = client.call("ModelInfer", req)
    assert [o.name for o in response.outputs] == [names[-1]]
    assert raw_outputs(response)[names[-1]].tobytes() == rest_outputs(server, inputs)[names[-1]].tobytes()
    req = raw_request(client, inputs)
    req.outputs.add(name="missing")
    code, details = code_of(lambda: client.call("ModelInfer", req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "unknown output 'missing'" in details
    req = raw_request(client, inputs)
    req.outputs.add(name=names[0])
    req.outputs.add(name=names[0])
    code, details = code_of(lambda: client.call("ModelInfer", req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "requested twice" in details


def bad(client, req):
    code, details = code_of(lambda: client.call("ModelInfer", req))
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
    return details


def test_hostile_messages_get_invalid_argument(client):
    inputs = sample_inputs()
    ids = inputs["input_ids"]
    # Wrong datatype: FP32 for an INT64 input, and an unknown datatype.
    req = raw_request(client, inputs)
    req.inputs[0].datatype = "FP32"
    assert "datatype FP32 given" in bad(client, req)
    req.inputs[0].datatype = "COMPLEX"
    assert "unknown datatype 'COMPLEX'" in bad(client, req)
    # Raw contents one byte short, and one entry missing.
    req = raw_request(client, inputs)
    req.raw_input_contents[0] = req.raw_input_contents[0][:-1]
    bad(client, req)
    req = raw_request(client, inputs)
    del req.raw_input_contents[-1]
    assert "raw_input_contents has 1 entries for 2 inputs" in bad(client, req)
    # Typed contents: wrong count, wrong field, and both typed and raw.
    req = client.message("ModelInferRequest", model_name=MODEL)
    for name, a in inputs.items():
        t = req.inputs.add(name=name, datatype="INT64", shape=list(a.shape))
        t.contents.int64_contents.extend(a.ravel().tolist())
    del req.inputs[1].contents.int64_contents[-1]
    assert "holds" in bad(client, req)
    req.inputs[1].contents.ClearField("int64_contents")
    req.inputs[1].contents.fp32_contents.extend([0.0] * ids.size)
    assert "contents in fp32_contents" in bad(client, req)
    req = raw_request(client, inputs)
    req.inputs[0].contents.int64_contents.append(1)
    assert "typed contents and raw_input_contents" in bad(client, req)
    # Huge declared sizes, a negative dim, a wrong rank, an unknown and a missing input.
    for shape in ([1 << 40, 1 << 40], [1, 1 << 30], [-1, 4], [1, 2, 3]):
        req = raw_request(client, inputs)
        del req.inputs[0].shape[:]
        req.inputs[0].shape.extend(shape)
        bad(client, req)
    req = raw_request(client, inputs)
    req.inputs[0].name = "bogus\n"
    assert "unknown input 'bogus?'" in bad(client, req)
    req = raw_request(client, {"input_ids": ids})
    assert "is missing" in bad(client, req)
    # Parameters of the wrong kind.
    req = raw_request(client, inputs)
    req.parameters["timeout"].string_param = "soon"
    assert "timeout" in bad(client, req)


def test_malformed_and_oversized_messages(client):
    # Bytes that are no ModelInferRequest: the transport refuses them, the server stays up.
    with pytest.raises(grpc.RpcError) as e:
        client.raw("ModelInfer", b"\xff\xff\xff\xff\x0f")
    assert e.value.code() in (grpc.StatusCode.INTERNAL, grpc.StatusCode.INVALID_ARGUMENT)
    # A message above --max-request-mb (2).
    inputs = sample_inputs()
    req = raw_request(client, inputs)
    req.id = "x" * (3 << 20)
    code, _ = code_of(lambda: client.call("ModelInfer", req))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert client.call("ServerLive").live
    assert len(client.call("ModelInfer", raw_request(client, inputs)).outputs) > 0


def test_metrics_count_grpc_calls(server, client):
    client.call("ServerLive")
    status, _, body = server.request("GET", "/metrics")
    assert status == 200
    assert 'endpoint="grpc_health_live"' in body.decode()
    assert 'endpoint="grpc_infer"' in body.decode()
