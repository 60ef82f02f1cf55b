"""Attune's ONNX inference engine for Python, in the shape of ONNX Runtime's InferenceSession.

    import attune
    session = attune.InferenceSession("model.onnx")
    outputs = session.run(None, {"x": x})

Inputs are read in place when they are C-contiguous arrays of the model's dtype; a strided
array is copied once into row-major order; another dtype is a ValueError, never converted.
Outputs are ndarrays over the result tensors' memory (no copy); an output that is an input
(or a reshape of one) is a view of that input array. The GIL is released during run().
"""

import os

from . import _attune

__version__ = _attune.__version__
__all__ = ["InferenceSession", "NodeArg", "Tokenizer", "Generator", "list_passes", "__version__"]

# Text to ids and back with a model's tokenizer.json or tokenizer.model:
#   attune.Tokenizer(path).encode(text) / .decode(ids)
Tokenizer = _attune.Tokenizer
# Generation from a decoder export with its KV cache; text prompts go through
# the tokenizer (tokenizer=PATH, else the one beside the model):
#   attune.Generator("decoder.onnx").generate("Once upon a time", max_new_tokens=20)
Generator = _attune.Generator


class NodeArg:
    """A graph input or output: name, shape (ints, symbol strings, None when unknown) and type."""

    __slots__ = ("name", "shape", "type")

    def __init__(self, name, type, shape):
        self.name = name
        self.type = type
        self.shape = shape

    def __repr__(self):
        return f"NodeArg(name={self.name!r}, type={self.type!r}, shape={self.shape!r})"


def _dtype_name(ort_type):
    """'tensor(float)' -> 'float32', the dtype name `attune inspect --format json` prints."""
    inner = ort_type[len("tensor("):-1]
    return {"float": "float32", "double": "float64"}.get(inner, inner)


class InferenceSession:
    """Loads, optimises and compiles an ONNX model (a path, or the model's bytes)."""

    def __init__(self, path_or_bytes, threads=0, fuse=True, verify_fusion=False,
                 attention_backend="auto", disabled_passes=(), max_tensor_mb=None, providers=None,
                 weights=None, weight_block=32, weight_symmetric=False, weight_accuracy_level=0,
                 keep_lm_head=False):
        # weights="bf16" / "int8" / "int4" compresses the float weights of every product with a constant B
        # at load (attune run --weights; docs/quantization.md).
        # ONNX Runtime code passes providers=[...]: Attune has the CPU one only.
        if providers is not None and list(providers) not in ([], ["CPUExecutionProvider"]):
            raise ValueError(f"Attune runs on the CPU only: providers must be ['CPUExecutionProvider'], "
                             f"got {list(providers)!r}")
        model = path_or_bytes
        if isinstance(model, (bytearray, memoryview)):
            model = bytes(model)
        elif not isinstance(model, bytes):
            model = os.fspath(model)
        self._session = _attune.Session(model, int(threads), bool(fuse), bool(verify_fusion),
                                        str(attention_backend), [str(p) for p in disabled_passes],
                                        None if max_tensor_mb is None else int(max_tensor_mb),
                                        "" if weights is None else str(weights), int(weight_block),
                                        bool(weight_symmetric), int(weight_accuracy_level), bool(keep_lm_head))
        self._inputs = [NodeArg(*info) for info in self._session.inputs()]
        self._outputs = [NodeArg(*info) for info in self._session.outputs()]

    def get_providers(self):
        return ["CPUExecutionProvider"]

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def run(self, output_names, input_feed, run_options=None):
        """Returns the named outputs (all when output_names is None or empty) as a list of ndarrays.
        run_options is ONNX Runtime's; Attune has none, so it must be None."""
        if run_options is not None:
            raise ValueError("run_options is not supported (Attune has no per-run options)")
        names = list(output_names) if output_names else None
        return self._session.run(names, dict(input_feed))

    def fusion_report(self):
        """The keys of `attune inspect --format json`: model, inputs, outputs, fuse, ops_before,
        ops_after, fusions, op_fusions, rejected, passes, iteration_cap_hit, assumptions, stopped_after. The public API has no model summary, so model
        holds the path (None for bytes) and None for producer, ir_version and the counts."""
        raw = self._session.report()
        passes = []
        for name in raw["passes_run"]:
            if name not in passes:
                passes.append(name)

        def info(arg):
            return {"name": arg.name, "dtype": _dtype_name(arg.type), "shape": arg.shape}

        return {
            "model": {"path": self._session.path(), "producer": None, "ir_version": None,
                      "opsets": None, "nodes": None, "initializers": None, "parameters": None,
                      "parameter_bytes": None},
            "inputs": [info(a) for a in self._inputs],
            "outputs": [info(a) for a in self._outputs],
            "fuse": self._session.fuse(),
            "ops_before": raw["ops_before"],
            "ops_after": raw["ops_after"],
            "fusions": raw["fusions"],
            "op_fusions": raw["op_fusions"],
            "rejected": raw["rejected"],
            "passes": passes,
            "iteration_cap_hit": raw["iteration_cap_hit"],
            "assumptions": raw["assumptions"],
            "stopped_after": raw["stopped_after"],
        }

    def save_optimized_model(self, path):
        """Writes the optimised graph as ONNX (fused attention as ONNX Attention where expressible)."""
        self._session.save_optimized_model(os.fspath(path))


def list_passes():
    """Names of the optimiser's passes in pipeline order (for disabled_passes)."""
    return _attune.list_passes()
