"""Runs an ONNX model with ONNX Runtime's Python API, as most ONNX code is written.

To run it with Attune, change the import to `import attune` and `onnxruntime.InferenceSession`
to `attune.InferenceSession`; nothing else (tests/python/test_examples.py does exactly that).

    python3 ort_style.py MODEL.onnx [INPUT_DIR] [OUTPUT_DIR]

INPUT_DIR holds <input name>.npy files; without it every input is random (symbolic dims = 2).
Each output is printed, and written as OUTPUT_DIR/<output name>.npy when OUTPUT_DIR is given.
"""

import os
import sys

import numpy as np
import onnxruntime

DTYPES = {"tensor(float)": np.float32, "tensor(float16)": np.float16, "tensor(double)": np.float64,
          "tensor(int64)": np.int64, "tensor(int32)": np.int32, "tensor(bool)": np.bool_}


def make_input(node_arg, rng):
    shape = [d if isinstance(d, int) else 2 for d in node_arg.shape]
    dtype = DTYPES[node_arg.type]
    if np.issubdtype(dtype, np.integer):
        return rng.integers(0, 10, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def main():
    model_path = sys.argv[1]
    input_dir = sys.argv[2] if len(sys.argv) > 2 else None
    output_dir = sys.argv[3] if len(sys.argv) > 3 else None

    session = onnxruntime.InferenceSession(model_path, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feed = {}
    for node_arg in session.get_inputs():
        print(f"input  {node_arg.name} {node_arg.type} {node_arg.shape}")
        if input_dir:
            feed[node_arg.name] = np.load(os.path.join(input_dir, node_arg.name + ".npy"))
        else:
            feed[node_arg.name] = make_input(node_arg, rng)

    output_names = [o.name for o in session.get_outputs()]
    results = session.run(output_names, feed)
    for name, value in zip(output_names, results):
        print(f"output {name} {value.dtype} {list(value.shape)} mean {float(np.mean(value)):.6f}")
        if output_dir:
            os.makedirs(output_dir, exist_ok=True)
            np.save(os.path.join(output_dir, name + ".npy"), value)


if __name__ == "__main__":
    main()
