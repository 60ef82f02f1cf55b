"""Every model in models/ through the Python API: stored PyTorch references, fused against unfused."""

import json
import math

import numpy as np
import pytest

import attune
from conftest import load_feeds, load_references, model_dirs

MODELS = model_dirs()


def tolerances(folder, reference):
    """(against PyTorch, fused against unfused): as tests/models/golden_test.cc sets them."""
    precision = json.loads((folder / "model.json").read_text()).get("precision", "float32")
    if precision == "float32":
        return 1e-4, 1e-5
    largest = max(float(np.max(np.abs(reference.astype(np.float64)))), 1e-3)
    ulp = 2.0 ** (math.floor(math.log2(largest)) - (10 if precision == "float16" else 7))
    return 4 * ulp, 2 * ulp


def test_models_are_found():
    assert len(MODELS) >= 20


@pytest.mark.parametrize("folder", MODELS, ids=lambda p: p.parent.name + "/" + p.name
                         if p.parent.name == "negative" else p.name)
def test_model_matches_references_and_unfused(folder):
    feeds = load_feeds(folder)
    refs = load_references(folder)
    fused = attune.InferenceSession(folder / "model.onnx")
    unfused = attune.InferenceSession(str(folder / "model.onnx"), fuse=False)
    names = [o.name for o in fused.get_outputs()]
    assert sorted(names) == sorted(refs)
    got = fused.run(names, feeds)
    plain = unfused.run(None, feeds)
    assert [o.name for o in unfused.get_outputs()] == names
    for name, value, base in zip(names, got, plain):
        assert value.shape == refs[name].shape, name
        assert value.dtype == refs[name].dtype, name
        if json.loads((folder / "model.json").read_text()).get("precision", "float32") == "float32":
            np.testing.assert_allclose(value, refs[name], rtol=1e-4, atol=1e-4, err_msg=name)
            np.testing.assert_allclose(value, base, rtol=1e-5, atol=1e-5, err_msg=name)
            continue
        pytorch, unfused = tolerances(folder, refs[name])
        np.testing.assert_allclose(value.astype(np.float64), refs[name].astype(np.float64), rtol=0, atol=pytorch,
                                   err_msg=name)
        np.testing.assert_allclose(value.astype(np.float64), base.astype(np.float64), rtol=0, atol=unfused,
                                   err_msg=name)


def test_run_returns_the_named_outputs_in_order(root):
    folder = root / "models" / "gpt_kvcache"
    s = attune.InferenceSession(folder / "model.onnx")
    names = [o.name for o in s.get_outputs()]
    assert len(names) >= 2
    every = dict(zip(names, s.run(None, load_feeds(folder))))
    picked = s.run(list(reversed(names)), load_feeds(folder))
    for name, value in zip(reversed(names), picked):
        np.testing.assert_array_equal(value, every[name])
    with pytest.raises(ValueError, match="unknown output"):
        s.run(["no_such_output"], load_feeds(folder))
