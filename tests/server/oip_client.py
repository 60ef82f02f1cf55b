"""A small Open Inference Protocol client (REST), written from the spec with the standard library,
and a helper that runs `attune serve` on a free loopback port for the tests."""
import http.client
import json
import os
import signal
import socket
import struct
import subprocess
import time

import numpy as np

CLI = os.environ.get("ATTUNE_CLI", "")
SOURCE = os.environ.get("ATTUNE_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))

DATATYPES = {"FP32": np.float32, "FP64": np.float64, "FP16": np.float16, "INT64": np.int64, "INT32": np.int32,
             "INT16": np.int16, "INT8": np.int8, "UINT8": np.uint8, "UINT16": np.uint16, "UINT32": np.uint32,
             "UINT64": np.uint64, "BOOL": np.bool_}
NAMES = {np.dtype(v): k for k, v in DATATYPES.items()}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """`attune serve` on 127.0.0.1 at a free port; stopped with SIGTERM."""

    def __init__(self, models, *flags):
        self.port = free_port()
        self.grpc_port = free_port()
        self.log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"attune_serve_{self.port}.log"), "w+")
        self.proc = subprocess.Popen([CLI, "serve", *models, "--port", str(self.port),
                                      "--grpc-port", str(self.grpc_port), *flags],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                status, _, _ = self.request("GET", "/v2/health/ready")
                if status == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("server did not become ready:\n" + self.output())

    def output(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def connection(self, timeout=60):
        return http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)

    def request(self, method, path, body=None, headers=None, timeout=60):
        conn = self.connection(timeout)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, dict(r.getheaders()), r.read()
        finally:
            conn.close()

    def json(self, method, path, doc=None):
        body = None if doc is None else json.dumps(doc).encode()
        status, headers, data = self.request(method, path, body, {"Content-Type": "application/json"})
        return status, json.loads(data) if data else None

    def rss_kib(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, timeout=60):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        return self.proc.returncode


def json_input(name, array):
    return {"name": name, "datatype": NAMES[array.dtype], "shape": list(array.shape), "data": array.ravel().tolist()}


def infer_json(server, model, inputs, outputs=None, binary_outputs=False):
    doc = {"id": "req-1", "inputs": [json_input(n, a) for n, a in inputs.items()]}
    if outputs is not None:
        doc["outputs"] = [{"name": o, "parameters": {"binary_data": binary_outputs}} for o in outputs]
    elif binary_outputs:
        doc["parameters"] = {"binary_data_output": True}
    status, headers, body = server.request("POST", f"/v2/models/{model}/infer", json.dumps(doc).encode(),
                                           {"Content-Type": "application/json"})
    return status, headers, body


def infer_binary(server, model, inputs, binary_outputs=True):
    """The binary tensor data extension: a JSON header, then each input's raw bytes."""
    header = {"inputs": [{"name": n, "datatype": NAMES[a.dtype], "shape": list(a.shape),
                          "parameters": {"binary_data_size": a.nbytes}} for n, a in inputs.items()],
              "parameters": {"binary_data_output": binary_outputs}}
    head = json.dumps(header).encode()
    body = head + b"".join(np.ascontiguousarray(a).tobytes() for a in inputs.values())
    return server.request("POST", f"/v2/models/{model}/infer", body,
                          {"Inference-Header-Content-Length": str(len(head)),
                           "Content-Type": "application/octet-stream"})


def decode_response(headers, body):
    """Output name -> numpy array, from a JSON or binary response."""
    length = headers.get("Inference-Header-Content-Length")
    head = body if length is None else body[:int(length)]
    doc = json.loads(head)
    offset = 0 if length is None else int(length)
    out = {}
    for o in doc["outputs"]:
        dtype = DATATYPES[o["datatype"]]
        size = (o.get("parameters") or {}).get("binary_data_size")
        if size is not None:
            out[o["name"]] = np.frombuffer(body[offset:offset + size], dtype=dtype).reshape(o["shape"])
            offset += size
        else:
            out[o["name"]] = np.array(o["data"], dtype=dtype).reshape(o["shape"])
    return doc, out


def sse_events(server, path, doc, timeout=60):
    """POSTs and reads server-sent events: a list of decoded `data:` payloads (strings kept as is)."""
    conn = server.connection(timeout)
    conn.request("POST", path, body=json.dumps(doc).encode(), headers={"Content-Type": "application/json"})
    r = conn.getresponse()
    events = []
    if r.status != 200:
        body = r.read()
        conn.close()
        return r.status, json.loads(body)
    buffer = b""
    while True:
        chunk = r.read1(65536) if hasattr(r, "read1") else r.read(1)
        if not chunk:
            break
        buffer += chunk
        while b"\n\n" in buffer:
            event, buffer = buffer.split(b"\n\n", 1)
            for line in event.split(b"\n"):
                if line.startswith(b"data: "):
                    payload = line[6:].decode()
                    events.append(payload if payload == "[DONE]" else json.loads(payload))
    conn.close()
    return 200, events


def bytes_tensor(strings):
    """BYTES elements in the binary format: 4-byte little-endian length, then the bytes."""
    return b"".join(struct.pack("<I", len(s)) + s for s in strings)
