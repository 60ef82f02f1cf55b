"""What a model entry is: how to build the module, its sample inputs and its model.json facts."""
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import numpy as np

SEQ = {0: "batch", 1: "seq"}


@dataclass
class ModelSpec:
    name: str                      # folder under models/ (negatives: "negative/<name>")
    description: str
    build: Callable                # () -> torch module (weights from the seed set before)
    make_inputs: Callable          # (module, numpy RandomState) -> {input name: array}
    input_names: List[str]
    output_names: List[str]
    dynamic_axes: Dict[str, Dict[int, str]]
    attention_blocks: List[dict]
    expected_fusions: int
    opset: int = 17
    seed: int = 0
    extra: Dict[str, object] = field(default_factory=dict)   # more model.json keys
    save_model: Optional[Callable] = None   # (onnx model, path) -> None; default onnx.save
    write: Optional[Callable] = None        # (spec, folder) -> None: exports and writes the folder itself


def block(mask, num_heads, head_dim, kv_num_heads=None, window=None, scale=None, past=None):
    """One attention_blocks entry of model.json; `scale` where the fused op's differs from 1/sqrt(head_dim);
    `past` (written only when given): whether the fused op must read a KV cache (its has_past)."""
    entry = {"mask": mask, "window": window, "num_heads": num_heads,
             "kv_num_heads": kv_num_heads or num_heads, "head_dim": head_dim}
    if scale is not None:
        entry["scale"] = scale
    if past is not None:
        entry["past"] = past
    return entry


def x_inputs(d_in, num_tokens, batch=2):
    """make_inputs for a module taking one float input x of shape (batch, T, d_in)."""
    def make(module, rng):
        return {"x": rng.standard_normal((batch, num_tokens, d_in)).astype(np.float32)}
    return make


def xy_spec(name, description, build, d_in, num_tokens, blocks, expected, **kw):
    """A module x (B, T, d_in) -> y, dynamic in batch and seq."""
    return ModelSpec(name=name, description=description, build=build,
                     make_inputs=x_inputs(d_in, num_tokens), input_names=["x"],
                     output_names=["y"], dynamic_axes={"x": SEQ, "y": SEQ},
                     attention_blocks=blocks, expected_fusions=expected, **kw)


@dataclass
class GraphSpec:
    """A model written as an ONNX graph (onnx.helper), not exported from a torch module: its reference
    outputs come from `reference(model, inputs)` (numpy_onnx.evaluate)."""
    name: str
    description: str
    build_graph: Callable          # () -> onnx.ModelProto
    make_inputs: Callable          # (numpy RandomState) -> {input name: array}
    reference: Callable            # (onnx model, inputs) -> {output name: array}
    attention_blocks: List[dict]
    expected_fusions: int
    seed: int = 0
    extra: Dict[str, object] = field(default_factory=dict)
    strict_check: bool = True      # False: an op below its ONNX opset (ONNX Runtime's LayerNormalization)
