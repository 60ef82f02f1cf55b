"""python3 -m attune run|inspect, against the stored references and the C++ CLI's exit codes."""

import json
import os
import subprocess
import sys

import numpy as np

from conftest import load_references


def attune_module(*args):
    return subprocess.run([sys.executable, "-m", "attune", *map(str, args)], capture_output=True, text=True)


def test_run_writes_outputs_matching_references(root, tmp_path):
    folder = root / "models" / "gpt_kvcache"
    inputs = [f"--input={p.stem}={p}" for p in sorted((folder / "inputs").glob("*.npy"))]
    r = attune_module("run", folder / "model.onnx", *inputs, "--output-dir", tmp_path, "--threads", "1")
    assert r.returncode == 0, r.stderr
    for name, ref in load_references(folder).items():
        np.testing.assert_allclose(np.load(tmp_path / f"{name}.npy"), ref, rtol=1e-4, atol=1e-4)
        assert f"output     {name} " in r.stdout


def test_inspect_json_has_the_report(root):
    r = attune_module("inspect", root / "models" / "mha_causal" / "model.onnx", "--format", "json")
    assert r.returncode == 0, r.stderr
    report = json.loads(r.stdout)
    assert len(report["fusions"]) == 1 and report["fusions"][0]["mask"] == "causal"
    r = attune_module("inspect", root / "models" / "mha_causal" / "model.onnx", "--no-fuse")
    assert r.returncode == 0 and "fused" not in r.stdout


def test_errors_are_one_line_and_exit_2(root, tmp_path):
    r = attune_module("run", tmp_path / "missing.onnx")
    assert r.returncode == 2 and r.stderr.startswith("error: ") and r.stderr.count("\n") == 1
    r = attune_module("run", root / "models" / "mha_causal" / "model.onnx")
    assert r.returncode == 2 and "missing input 'x'" in r.stderr
    r = attune_module("inspect", root / "models" / "mha_causal" / "model.onnx", "--bogus")
    assert r.returncode == 2 and r.stderr.startswith("error: ")
