"""InferenceSession(weights=...): the float weights of products compressed at load (docs/quantization.md)."""

import numpy as np
import pytest

import attune


def _products(root):
    folder = root / "tests" / "weights" / "data" / "products"
    feeds = {name: np.load(folder / "inputs" / f"{name}.npy") for name in ("A", "A2", "ids", "X")}
    return folder / "model.onnx", feeds


def _reference_y1(root, feeds, bits, block, symmetric):
    """Y1 = A · B1 + bias1 with B1 quantized blockwise along K as the writers do, in float64."""
    folder = root / "tests" / "weights" / "data" / "products" / "weights"
    inits = {name: np.load(folder / f"{name}.npy") for name in ("B1", "bias1")}
    w = inits["B1"].astype(np.float64).T  # [N, K]
    n, k = w.shape
    deq = np.zeros_like(w)
    top, mid = (1 << bits) - 1, 1 << (bits - 1)
    for k0 in range(0, k, block):
        blk = w[:, k0:k0 + block].astype(np.float32)
        if symmetric:
            extreme = blk[np.arange(n), np.abs(blk).argmax(axis=1)]
            scale = np.where(extreme != 0, extreme / np.float32(-mid), 1).astype(np.float32)
            zp = np.full(n, mid)
        else:
            lo, hi = np.minimum(blk.min(axis=1), 0), np.maximum(blk.max(axis=1), 0)
            scale = np.where(hi - lo > 0, (hi - lo) / np.float32(top), 1).astype(np.float32)
            zp = np.clip(np.round(-lo / scale), 0, top)
        q = np.clip(np.round(blk / scale[:, None]) + zp[:, None], 0, top)
        deq[:, k0:k0 + block] = (q - zp[:, None]) * scale[:, None].astype(np.float64)
    a = feeds["A"].astype(np.float64).reshape(-1, k)
    return (a @ deq.T + inits["bias1"]).reshape(2, 3, n)


@pytest.mark.parametrize("bits,block,symmetric", [(4, 32, False), (8, 64, True)])
def test_weights_option_runs_the_quantized_products(root, bits, block, symmetric):
    path, feeds = _products(root)
    s = attune.InferenceSession(path, threads=1, weights=f"int{bits}", weight_block=block,
                                weight_symmetric=symmetric)
    y1 = s.run(["Y1"], feeds)[0]
    ref = _reference_y1(root, feeds, bits, block, symmetric)
    # Rounding ties (x.5 steps) may fall either way in float32: a few weights differ by one step.
    assert np.abs(y1 - ref).max() / np.abs(ref).max() < 2e-3
    report = s.fusion_report()
    assert report["ops_after"].get("MatMulNBits", 0) == 4


def test_weights_bf16_and_as_is(root):
    path, feeds = _products(root)
    plain = attune.InferenceSession(path, threads=1).run(["Y1"], feeds)[0]
    bf16 = attune.InferenceSession(path, threads=1, weights="bf16").run(["Y1"], feeds)[0]
    assert not np.array_equal(plain, bf16)
    assert np.abs(bf16 - plain).max() / np.abs(plain).max() < 1e-2


@pytest.mark.parametrize("kwargs", [dict(weights="int3"), dict(weights="int4", weight_block=48),
                                    dict(weights="int4", weight_accuracy_level=5)])
def test_bad_weight_options_raise_value_error(root, kwargs):
    path, _ = _products(root)
    with pytest.raises(ValueError):
        attune.InferenceSession(path, **kwargs)
