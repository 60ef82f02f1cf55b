"""`cmake --install` puts a module that imports and runs from the prefix alone."""

import os
import subprocess
import sys

import pytest


def test_installed_module_imports_from_the_prefix(root, tmp_path):
    cmake, build = os.environ.get("ATTUNE_CMAKE"), os.environ.get("ATTUNE_BINARY_DIR")
    if not cmake or not build:
        pytest.skip("needs ATTUNE_CMAKE and ATTUNE_BINARY_DIR (set by ctest)")
    prefix = tmp_path / "prefix"
    subprocess.run([cmake, "--install", build, "--prefix", str(prefix)], check=True, capture_output=True)
    site = prefix / "lib" / "python3" / "dist-packages"
    assert (site / "attune" / "__init__.py").exists()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(site)
    code = ("import attune, sys; s = attune.InferenceSession(sys.argv[1]); "
            "print(attune.__file__); print(s.get_inputs()[0].shape)")
    r = subprocess.run([sys.executable, "-c", code, str(root / "models" / "mha_causal" / "model.onnx")],
                       env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    module_file, shape = r.stdout.splitlines()
    assert module_file.startswith(str(site))
    assert shape == "['batch', 'seq', 64]"
