#!/usr/bin/env bash
# Throughput and latency of `attune serve` on loopback (a benchmark, not a test).
#
# Starts the server on 127.0.0.1 with an encoder and a decoder, then:
#  1. infer: 1, 4, 16 and 64 concurrent clients, each sending the encoder's request (binary tensor
#     data) for --seconds; prints requests/s and p50/p99 latency;
#  2. generation: the same client counts on /v2/models/DECODER/generate (greedy, --new tokens);
#     prints requests/s, p50/p99 latency and aggregate tokens/s;
#  3. continuous batching: aggregate tokens/s of 8 concurrent streams against one stream.
# The load average is printed before and after (the machine may be shared). With --rounds R the
# generation client counts run R times in turn (interleaved, so that a change in the machine's load
# touches every count alike), each round with its 8-against-1 ratio.
#
# usage: bench/serve_bench.sh [--encoder DIR_OR_ONNX] [--decoder DIR_OR_ONNX] [--seconds 10] [--new 64]
#                             [--threads 1] [--max-concurrency 2] [--prompt-len 16] [--seq 32 (encoder input length)]
#                             [--infer-clients 1,4,16,64 ('' skips infer)] [--gen-clients 1,4,8,16,64] [--rounds 1]
#                             [--attune PATH (the CLI; default build/tools/attune)]
# Defaults: models/hf_distilbert and models/hf_gpt2_pos_decode (small test models). For the sizes the
# README quotes, BERT-base and GPT-2-small with random weights:
#   /usr/bin/python3 models/gen/bench_models.py --out /tmp/benchmodels --only hf_gpt2
#   bench/serve_bench.sh --decoder /tmp/benchmodels/hf_gpt2_decode.onnx
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
encoder=$root/models/hf_distilbert decoder=$root/models/hf_gpt2_pos_decode
seconds=10 new=64 threads=1 concurrency=2 prompt_len=16 seq=32
infer_clients=1,4,16,64 gen_clients=1,4,8,16,64 rounds=1 attune=$root/build/tools/attune
while [ $# -gt 0 ]; do
  case "$1" in
    --encoder) encoder=$2; shift 2 ;;
    --decoder) decoder=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --new) new=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --max-concurrency) concurrency=$2; shift 2 ;;
    --prompt-len) prompt_len=$2; shift 2 ;;
    --seq) seq=$2; shift 2 ;;
    --infer-clients) infer_clients=$2; shift 2 ;;
    --gen-clients) gen_clients=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --attune) attune=$2; shift 2 ;;
    *) sed -n '2,23p' "$0" >&2; exit 2 ;;
  esac
done
[ -x "$attune" ] || { echo "error: build first: scripts/build.sh release attune_cli" >&2; exit 2; }
port=$(/usr/bin/python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1',0)); print(s.getsockname()[1])")
log=$(mktemp)
"$attune" serve "$encoder" "$decoder" --port "$port" --grpc-port 0 --threads "$threads" --max-concurrency "$concurrency" \
  --max-queue 256 --max-batch 64 --access-log off > "$log" 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null; wait $pid 2>/dev/null; rm -f "$log"' EXIT
name() { local p=${1%/}; case "$p" in *.onnx) basename "$p" .onnx ;; *) basename "$p" ;; esac; }
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "server: $attune --threads $threads --max-concurrency $concurrency; encoder $(name "$encoder"), decoder $(name "$decoder")"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$port" "$(name "$encoder")" "$(name "$decoder")" "$seconds" "$new" "$prompt_len" "$seq" \
  "$infer_clients" "$gen_clients" "$rounds" <<'PY'
import http.client, json, os, sys, threading, time
import numpy as np
port, encoder, decoder, seconds, new, prompt_len = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
seq = int(sys.argv[7])
infer_clients = [int(c) for c in sys.argv[8].split(",") if c]
gen_clients = [int(c) for c in sys.argv[9].split(",") if c]
rounds = int(sys.argv[10])
load = lambda: " ".join(open("/proc/loadavg").read().split()[:3])

def call(conn, method, path, body=None, headers=None):
    conn.request(method, path, body=body, headers=headers or {})
    r = conn.getresponse()
    return r.status, dict(r.getheaders()), r.read()

deadline = time.time() + 120
while True:
    try:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
        if call(c, "GET", "/v2/health/ready")[0] == 200: break
    except OSError:
        pass
    if time.time() > deadline: sys.exit("server not ready")
    time.sleep(0.2)

def infer_body():
    c = http.client.HTTPConnection("127.0.0.1", port)
    meta = json.loads(call(c, "GET", f"/v2/models/{encoder}")[2])
    arrays, inputs = [], []
    for i in meta["inputs"]:
        shape = [1 if d < 0 and k == 0 else (seq if d < 0 else d) for k, d in enumerate(i["shape"])]
        a = (np.ones if "mask" in i["name"] else np.zeros)(shape, dtype=np.int64 if i["datatype"] == "INT64" else np.float32)
        arrays.append(a)
        inputs.append({"name": i["name"], "datatype": i["datatype"], "shape": shape, "parameters": {"binary_data_size": a.nbytes}})
    head = json.dumps({"inputs": inputs, "parameters": {"binary_data_output": True}}).encode()
    return head + b"".join(a.tobytes() for a in arrays), {"Inference-Header-Content-Length": str(len(head))}, shape

def run(clients, path, body, headers, per_request_tokens=0):
    lat, errors, lock = [], [0], threading.Lock()
    stop = time.time() + seconds
    def client():
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
        while time.time() < stop:
            t0 = time.perf_counter()
            status, _, data = call(c, "POST", path, body, headers)
            dt = time.perf_counter() - t0
            with lock:
                if status == 200: lat.append(dt)
                else: errors[0] += 1
    t0 = time.perf_counter()
    ts = [threading.Thread(target=client) for _ in range(clients)]
    for t in ts: t.start()
    for t in ts: t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    p = lambda q: lat[min(len(lat) - 1, int(q * len(lat)))] * 1000 if lat else float("nan")
    return len(lat) / wall, p(0.5), p(0.99), errors[0], len(lat) * per_request_tokens / wall

if infer_clients:
    body, headers, shape = infer_body()
    print(f"\n### infer: {encoder}, input {shape}, {seconds:.0f} s per row\n")
    print("| clients | requests/s | p50 ms | p99 ms | errors |\n|---|---|---|---|---|")
    for n in infer_clients:
        rps, p50, p99, err, _ = run(n, f"/v2/models/{encoder}/infer", body, headers)
        print(f"| {n} | {rps:.1f} | {p50:.2f} | {p99:.2f} | {err} |", flush=True)

prompt = [(i * 37 + 11) % 97 for i in range(prompt_len)]
gen = json.dumps({"input_ids": prompt, "parameters": {"max_tokens": new, "temperature": 0}}).encode()
print(f"\n### generate: {decoder}, prompt {prompt_len} tokens, {new} new, greedy\n")
print("| round | clients | requests/s | p50 ms | p99 ms | tokens/s | errors | load average |\n|---|---|---|---|---|---|---|---|")
ratios = []
for r in range(rounds):
    rates = {}
    for n in gen_clients:
        rps, p50, p99, err, tps = run(n, f"/v2/models/{decoder}/generate", gen, {"Content-Type": "application/json"}, new)
        rates[n] = tps
        print(f"| {r + 1} | {n} | {rps:.2f} | {p50:.1f} | {p99:.1f} | {tps:.1f} | {err} | {load()} |", flush=True)
    if 1 in rates and 8 in rates:
        ratios.append(rates[8] / rates[1])
        print(f"| {r + 1} | 8 against 1 | | | | {ratios[-1]:.2f}x | | |", flush=True)
if ratios:
    ratios.sort()
    print(f"\ncontinuous batching: aggregate tokens/s of 8 streams against 1 stream: "
          f"{', '.join(f'{x:.2f}x' for x in ratios)} (median {ratios[len(ratios) // 2]:.2f}x)")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
