"""InferenceSession's metadata, errors, zero-copy inputs, dtypes, fusion report and version."""

import json
import os
import pathlib
import re
import subprocess

import numpy as np
import pytest

import attune
from conftest import load_feeds


def test_version_is_the_library_version(root):
    cmake = (root / "CMakeLists.txt").read_text()
    assert attune.__version__ == re.search(r"project\(attune VERSION ([0-9.]+)", cmake).group(1)


def test_inputs_and_outputs_with_symbolic_dims(root):
    s = attune.InferenceSession(str(root / "models" / "mha_causal" / "model.onnx"))
    (x,) = s.get_inputs()
    (y,) = s.get_outputs()
    assert (x.name, x.type, x.shape) == ("x", "tensor(float)", ["batch", "seq", 64])
    assert (y.name, y.type, y.shape) == ("y", "tensor(float)", ["batch", "seq", 64])


def test_input_types_as_onnx_runtime_spells_them(root, typed_model):
    s = attune.InferenceSession(root / "models" / "gpt_kvcache" / "model.onnx")
    meta = json.loads((root / "models" / "gpt_kvcache" / "model.json").read_text())
    ort = {"float32": "tensor(float)", "int64": "tensor(int64)"}
    for arg in s.get_inputs():
        assert arg.type == ort[meta["inputs"][arg.name]["dtype"]]
        assert arg.shape == meta["inputs"][arg.name]["shape"]
    t = attune.InferenceSession(typed_model)
    assert [(a.name, a.type, a.shape) for a in t.get_inputs()] == [
        ("x", "tensor(float)", ["batch", 4]), ("h", "tensor(float16)", [3]), ("m", "tensor(bool)", [3])]


def test_model_from_bytes_equals_model_from_path(root):
    path = root / "models" / "mha_causal" / "model.onnx"
    feeds = load_feeds(path.parent)
    a = attune.InferenceSession(path).run(None, feeds)[0]
    b = attune.InferenceSession(path.read_bytes()).run(None, feeds)[0]
    np.testing.assert_array_equal(a, b)


def test_truncated_model_is_value_error(root):
    data = (root / "models" / "mha_causal" / "model.onnx").read_bytes()
    with pytest.raises(ValueError, match="ONNX"):
        attune.InferenceSession(data[: len(data) // 3])


def test_missing_file_is_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no_model.onnx"):
        attune.InferenceSession(tmp_path / "no_model.onnx")


def test_unsupported_op_is_not_implemented():
    import onnx_builder as ob
    model = ob.model([ob.node("NoSuchOp", ["x"], ["y"], "n")], [ob.value_info("x", ob.FLOAT, [2])],
                     [ob.value_info("y", ob.FLOAT, [2])])
    with pytest.raises(NotImplementedError, match="NoSuchOp"):
        attune.InferenceSession(model)


def test_size_limit_is_memory_error(root):
    folder = root / "models" / "mha_causal"
    s = attune.InferenceSession(folder / "model.onnx", max_tensor_mb=1)
    big = np.zeros((2, 4096, 64), np.float32)  # 2 MiB
    with pytest.raises(MemoryError):
        s.run(None, {"x": big})


@pytest.fixture(scope="module")
def mha(root):
    folder = root / "models" / "mha_causal"
    return attune.InferenceSession(folder / "model.onnx"), load_feeds(folder)


def test_wrong_dtype_is_value_error_not_a_conversion(mha):
    s, feeds = mha
    with pytest.raises(ValueError, match="float64"):
        s.run(None, {"x": feeds["x"].astype(np.float64)})
    with pytest.raises(ValueError):
        s.run(None, {"x": feeds["x"].astype(">f4")})  # same values, foreign byte order


def test_wrong_rank_is_value_error(mha):
    s, feeds = mha
    with pytest.raises(ValueError, match="rank"):
        s.run(None, {"x": feeds["x"][0]})


def test_missing_input_is_value_error(mha):
    s, _ = mha
    with pytest.raises(ValueError, match="missing input 'x'"):
        s.run(None, {})


def test_unknown_input_name_is_value_error(mha):
    s, feeds = mha
    with pytest.raises(ValueError, match="unknown input 'z'"):
        s.run(None, {"x": feeds["x"], "z": feeds["x"]})


def test_non_array_input_is_value_error(mha):
    s, feeds = mha
    with pytest.raises(ValueError, match="numpy array"):
        s.run(None, {"x": feeds["x"].tolist()})


def test_contiguous_input_is_read_in_place(typed_model):
    # y = Identity(x): the engine returns the memory it was given, so y's data pointer is x's
    # exactly when the binding handed Attune x's own buffer rather than a copy.
    s = attune.InferenceSession(typed_model)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    h, m = np.zeros(3, np.float16), np.zeros(3, bool)
    y = s.run(["y"], {"x": x, "h": h, "m": m})[0]
    assert y.ctypes.data == x.ctypes.data
    np.testing.assert_array_equal(y, x)
    del x  # y keeps the input's memory alive
    np.testing.assert_array_equal(y, np.arange(8, dtype=np.float32).reshape(2, 4))


def test_strided_input_is_copied_once_and_correct(typed_model):
    s = attune.InferenceSession(typed_model)
    wide = np.arange(16, dtype=np.float32).reshape(2, 8)
    x = wide[:, ::2]
    assert not x.flags.c_contiguous
    y = s.run(["y"], {"x": x, "h": np.zeros(3, np.float16), "m": np.zeros(3, bool)})[0]
    assert y.flags.c_contiguous
    assert y.ctypes.data != wide.ctypes.data
    np.testing.assert_array_equal(y, x)


def test_outputs_are_not_copies_and_outlive_the_session(mha):
    s, feeds = mha
    ref = s.run(None, feeds)[0].copy()
    session = attune.InferenceSession(s._session.path())
    y = session.run(None, feeds)[0]
    assert not y.flags.owndata and y.base is not None  # a view over the result tensor's memory
    del session
    np.testing.assert_array_equal(y, ref)


def test_float16_and_bool_round_trip(typed_model):
    s = attune.InferenceSession(typed_model)
    h = np.array([1.5, -2.0, 65504.0], np.float16)
    m = np.array([True, False, True])
    y, hf, nm, h_out = s.run(None, {"x": np.zeros((1, 4), np.float32), "h": h, "m": m})
    assert hf.dtype == np.float32 and nm.dtype == np.bool_ and h_out.dtype == np.float16
    np.testing.assert_array_equal(hf, h.astype(np.float32))
    np.testing.assert_array_equal(nm, ~m)
    np.testing.assert_array_equal(h_out, h)


def test_fusion_report_has_the_cli_json_keys(root, mha):
    s, _ = mha
    report = s.fusion_report()
    cli = os.environ.get("ATTUNE_CLI")
    if cli:
        out = subprocess.run([cli, "inspect", s._session.path(), "--format", "json"], check=True,
                             capture_output=True, text=True).stdout
        expected = json.loads(out)
        # The CLI also lists the model's quantized products (tools/report_quantized.cc), which the
        # session's report does not carry yet.
        assert set(report) == set(expected) - {"quantized_products"}
        assert set(report["model"]) == set(expected["model"])
        assert report["inputs"] == expected["inputs"] and report["outputs"] == expected["outputs"]
        assert report["ops_before"] == expected["ops_before"]
        assert report["ops_after"] == expected["ops_after"]
        assert report["passes"] == expected["passes"]
        assert [set(f) for f in report["fusions"]] == [set(f) for f in expected["fusions"]]
        assert report["fusions"][0]["mask"] == expected["fusions"][0]["mask"]
    assert {"model", "inputs", "outputs", "fuse", "ops_before", "ops_after", "fusions", "rejected",
            "passes"} <= set(report)
    (fusion,) = report["fusions"]
    assert fusion["causal"] and fusion["num_heads"] == 4 and fusion["head_dim"] == 16
    assert attune.InferenceSession(s._session.path(), fuse=False).fusion_report()["fusions"] == []


def test_options_reach_the_session(root, tmp_path):
    path = root / "models" / "mha_causal" / "model.onnx"
    with pytest.raises(ValueError, match="attention_backend"):
        attune.InferenceSession(path, attention_backend="gpu")
    passes = attune.list_passes()
    assert passes
    s = attune.InferenceSession(path, threads=1, verify_fusion=True, attention_backend="reference")
    assert s.fusion_report()["fusions"][0].get("verify_max_abs_error") is not None
    out = tmp_path / "optimized.onnx"
    s.save_optimized_model(out)
    reloaded = attune.InferenceSession(out)
    feeds = load_feeds(path.parent)
    np.testing.assert_allclose(reloaded.run(None, feeds)[0], s.run(None, feeds)[0], rtol=1e-5, atol=1e-5)
