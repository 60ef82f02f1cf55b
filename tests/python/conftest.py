"""Shared fixtures: the source tree's models and the small hand-built models of onnx_builder."""

import json
import os
import pathlib
import sys

import numpy as np
import pytest

ROOT = pathlib.Path(os.environ.get("ATTUNE_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import onnx_builder as ob  # noqa: E402


def model_dirs():
    """Every model folder under models/ that has a model.onnx (negative models included)."""
    return sorted(p.parent for p in (ROOT / "models").glob("**/model.onnx"))


def load_feeds(folder):
    meta = json.loads((folder / "model.json").read_text())
    return {name: np.load(folder / "inputs" / f"{name}.npy") for name in meta["inputs"]}


def load_references(folder):
    meta = json.loads((folder / "model.json").read_text())
    return {name: np.load(folder / "outputs" / f"{name}.npy") for name in meta["outputs"]}


@pytest.fixture(scope="session")
def root():
    return ROOT


@pytest.fixture(scope="session")
def typed_model():
    """y = Identity(x) (float, symbolic batch); hf = Cast(h: float16 -> float); nm = Not(m: bool);
    h is also an output (float16 out as it came in)."""
    return ob.model(
        [ob.node("Identity", ["x"], ["y"], "identity"),
         ob.node("Cast", ["h"], ["hf"], "cast", to=ob.FLOAT),
         ob.node("Not", ["m"], ["nm"], "not")],
        [ob.value_info("x", ob.FLOAT, ["batch", 4]), ob.value_info("h", ob.FLOAT16, [3]),
         ob.value_info("m", ob.BOOL, [3])],
        [ob.value_info("y", ob.FLOAT, ["batch", 4]), ob.value_info("hf", ob.FLOAT, [3]),
         ob.value_info("nm", ob.BOOL, [3]), ob.value_info("h", ob.FLOAT16, [3])])
