#!/usr/bin/python3
"""The text bench/compare_model.sh prints: the machine header, each model's table heading, and one
table row per case from the JSON and /usr/bin/time files of its rounds. Standard library only.

  compare_model_table.py machine PEAK.json|- [WHY_NOT]  the CPU (lscpu) and machine_peak's figures
                                                      (with '-': why there are none)
  compare_model_table.py kind INPUT_DIR               'decode' if input_ids.npy has 1 query row, else 'prefill'
  compare_model_table.py heading MODEL INPUT_DIR KIND ROUNDS REPEAT PEAK.json|-
  compare_model_table.py row CASE_DIR THREADS LOAD KIND PEAK.json|-
  compare_model_table.py work CASE_DIR                the work Attune counts per run
"""
import ast
import glob
import json
import os
import re
import statistics
import subprocess
import sys


def load_json(path):
    if path == '-' or not os.path.exists(path):
        return None
    with open(path) as f:
        lines = f.read().strip().splitlines()
    return json.loads(lines[-1]) if lines else None


def peak_rss_mb(time_log):
    with open(time_log) as f:
        m = re.search(r'Maximum resident set size \(kbytes\): (\d+)', f.read())
    return int(m.group(1)) / 1024 if m else float('nan')


def lscpu():
    try:
        out = subprocess.run(['lscpu'], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return {}
    fields = {}
    for line in out.splitlines():
        key, _, value = line.partition(':')
        fields[key.strip()] = value.strip()
    return fields


def microarchitecture(family, flags):
    if family == '25':
        return 'Zen 4' if 'avx512f' in flags.split() else 'Zen 3'
    if family == '26':
        return 'Zen 5'
    return None


def fma_peak(peak, threads):
    """(GFLOP/s, register kind) at `threads`: min(threads × 1-thread, all-thread figure)."""
    for isa in ('zmm', 'ymm'):
        one, all_ = peak.get(f'fma_{isa}_gflops_1t'), peak.get(f'fma_{isa}_gflops_nt')
        if one is not None and all_ is not None:
            return (all_ if threads >= peak['threads'] else min(threads * one, all_)), isa
    return None, None


def read_bandwidth(peak, threads):
    one, all_ = peak['read_gbs_1t'], peak['read_gbs_nt']
    return all_ if threads >= peak['threads'] else min(threads * one, all_)


def cmd_machine(peak_path, why_not='not built (scripts/build.sh release machine_peak)'):
    cpu = lscpu()
    family, model = cpu.get('CPU family', '?'), cpu.get('Model', '?')
    arch = microarchitecture(family, cpu.get('Flags', ''))
    print(f"CPU: {cpu.get('Model name', '?')}, family {family} model {model}"
          f"{' (' + arch + ')' if arch else ''}, {cpu.get('CPU(s)', '?')} CPUs")
    peak = load_json(peak_path)
    if peak is None:
        print(f'machine peak: not measured, bench/machine_peak {why_not}')
        return
    n = peak['threads']
    fma = []
    for isa in ('zmm', 'ymm'):
        one, all_ = peak.get(f'fma_{isa}_gflops_1t'), peak.get(f'fma_{isa}_gflops_nt')
        fma.append(f'{isa} {one:.1f} / {all_:.1f}' if one is not None else f'{isa} not available')
    print(f"machine peak (bench/machine_peak, 1 / {n} threads): fp32 FMA GFLOP/s {', '.join(fma)}; "
          f"read {peak['read_gbs_1t']:.1f} / {peak['read_gbs_nt']:.1f} GB/s "
          f"(sum over {peak['buffer_mib']} MiB in four streams a thread)")


def npy_shape(path):
    with open(path, 'rb') as f:
        magic = f.read(8)
        if magic[:6] != b'\x93NUMPY':
            return None
        size = int.from_bytes(f.read(2 if magic[6] == 1 else 4), 'little')
        return tuple(ast.literal_eval(f.read(size).decode('latin1'))['shape'])


def cmd_kind(input_dir):
    ids = os.path.join(input_dir, 'input_ids.npy')
    shape = npy_shape(ids) if os.path.exists(ids) else None
    print('decode' if shape and shape[-1] == 1 else 'prefill')


def cmd_heading(model, input_dir, kind, rounds, repeat, peak_path):
    rows = 'decode: 1 query row' if kind == 'decode' else 'prefill: more than 1 query row'
    print(f'\n### {model} ({rows}), inputs {input_dir}\n')
    print(f'{rounds} round(s) per case, each one ONNX Runtime and one Attune process (in turn first) of '
          f'1 warm-up + {repeat} timed runs; ms are medians over all timed runs of an engine, peak MB the largest '
          'max RSS of its processes, load ms the median session creation time.')
    peak = load_json(peak_path)
    if peak is None:
        print('Efficiency: not available without bench/machine_peak.')
    elif kind == 'decode':
        print("Efficiency: Attune's weight_mb / median (GB/s) in % of the measured read bandwidth at that "
              'thread count (min(threads × 1-thread, all-thread figure)).')
    else:
        _, isa = fma_peak(peak, 1)
        print(f"Efficiency: Attune's gflop / median (GFLOP/s) in % of the measured {isa} fp32 FMA peak at that "
              'thread count (min(threads × 1-thread, all-thread figure)).')
    print('A busy-core row has a spinning process on one core; its efficiency is still against the quiet peak.\n')
    print('| threads | load | ORT ms | Attune ms | speed-up | peak MB ORT / Attune | load ms ORT / Attune '
          '| fused attention | efficiency |')
    print('|---|---|---|---|---|---|---|---|---|')


def cmd_row(case_dir, threads, load, kind, peak_path):
    threads = int(threads)
    ort = [load_json(p) for p in sorted(glob.glob(os.path.join(case_dir, 'ort.*.json')))]
    att = [load_json(p) for p in sorted(glob.glob(os.path.join(case_dir, 'attune.*.json')))]
    ort_ms = statistics.median(t for j in ort for t in j['times_ms'])
    att_ms = statistics.median(t for j in att for t in j['latencies_ms'])
    ort_mb = max(peak_rss_mb(p) for p in glob.glob(os.path.join(case_dir, 'ort.*.time')))
    att_mb = max(peak_rss_mb(p) for p in glob.glob(os.path.join(case_dir, 'attune.*.time')))
    ort_load = statistics.median(j['load_ms'] for j in ort)
    att_load = statistics.median(j['load_ms'] for j in att)
    fused = att[0]['fused_attention']
    peak = load_json(peak_path)
    efficiency = 'n/a'
    if peak is not None and kind == 'decode':
        gbs = att[0]['weight_mb'] / att_ms
        efficiency = f'{100 * gbs / read_bandwidth(peak, threads):.0f}% of read BW ({gbs:.1f} GB/s)'
    elif peak is not None:
        gflops = att[0]['gflop'] / (att_ms / 1000)
        fma, isa = fma_peak(peak, threads)
        if fma:
            efficiency = f'{100 * gflops / fma:.0f}% of {isa} FMA peak ({gflops:.1f} GFLOP/s)'
    label = 'busy core' if load == 'busy' else load
    print(f'| {threads} | {label} | {ort_ms:.2f} | {att_ms:.2f} | {ort_ms / att_ms:.2f}x | {ort_mb:.0f} / {att_mb:.0f} '
          f'| {ort_load:.0f} / {att_load:.0f} | {fused} | {efficiency} |', flush=True)


def cmd_work(case_dir):
    att = load_json(sorted(glob.glob(os.path.join(case_dir, 'attune.*.json')))[0])
    print(f"Attune counts per run: {att['gflop']:.3f} GFLOP of matrix products, convolutions and attention, "
          f"{att['weight_mb']:.1f} MB of float weights read.")


if __name__ == '__main__':
    commands = {'machine': cmd_machine, 'kind': cmd_kind, 'heading': cmd_heading, 'row': cmd_row, 'work': cmd_work}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        sys.exit(__doc__)
    commands[sys.argv[1]](*sys.argv[2:])
