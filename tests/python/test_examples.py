"""examples/python/ort_style.py, written for ONNX Runtime, runs on Attune with two lines changed."""

import subprocess
import sys

import numpy as np

from conftest import load_references


def test_ort_script_runs_with_the_import_and_class_changed(root, tmp_path):
    original = (root / "examples" / "python" / "ort_style.py").read_text()
    ported = original.replace("import onnxruntime\n", "import attune\n").replace(
        "onnxruntime.InferenceSession(", "attune.InferenceSession(")
    changed = [(a, b) for a, b in zip(original.splitlines(), ported.splitlines()) if a != b]
    assert len(changed) == 2  # the import and the class name, nothing else
    assert "import onnxruntime" not in ported and "onnxruntime.InferenceSession(" not in ported
    script = tmp_path / "attune_style.py"
    script.write_text(ported)
    folder = root / "models" / "gpt_kvcache"
    out_dir = tmp_path / "out"
    run = subprocess.run([sys.executable, str(script), str(folder / "model.onnx"), str(folder / "inputs"),
                          str(out_dir)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    refs = load_references(folder)
    for name, ref in refs.items():
        np.testing.assert_allclose(np.load(out_dir / f"{name}.npy"), ref, rtol=1e-4, atol=1e-4)
    # Random inputs for symbolic dims also run (the script's path without INPUT_DIR).
    run = subprocess.run([sys.executable, str(script), str(folder / "model.onnx")], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.count("output ") == len(refs)
