"""Writes the MatMulNBits test fixtures: one single-node model per case, its
input A, the double-precision dequantize-then-multiply reference, and ONNX
Runtime's output on the same file (made once with ort-run; the tests never
need ONNX Runtime). Run: /usr/bin/python3 tests/quantized/gen_matmul_nbits_fixtures.py
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "models", "gen"))
from matmul_nbits_writer import make_nbits_node  # noqa: E402

ORT_RUN = os.path.join(HERE, "..", "..", "..", "shared", "tools", "ort", "ort-run")

# name: (K, N, A shape, node options); block/symmetry/accuracy as each writer sets them.
CASES = {
    "ort_default_b128_asym": (256, 64, [2, 3, 256], dict(bits=4, block_size=128, symmetric=False)),
    "genai_cpu_b32_sym_acc4_decode": (256, 64, [1, 1, 256], dict(bits=4, block_size=32, symmetric=True,
                                                                 accuracy_level=4)),
    "genai_cpu_b32_sym_acc4_prefill": (256, 64, [1, 9, 256], dict(bits=4, block_size=32, symmetric=True,
                                                                  accuracy_level=4)),
    "tfjs_q4_b32_sym_bias_partial_block": (200, 48, [3, 200], dict(bits=4, block_size=32, symmetric=True,
                                                                   bias=True, flat_scales=False)),
    "int8_asym_b64_acc0": (192, 40, [5, 192], dict(bits=8, block_size=64, symmetric=False, accuracy_level=0)),
    "int8_sym_b16_acc4": (128, 24, [1, 128], dict(bits=8, block_size=16, symmetric=True, accuracy_level=4)),
    "int8_asym_b32_acc4": (160, 33, [2, 160], dict(bits=8, block_size=32, symmetric=False, accuracy_level=4)),
    "int4_asym_b64_acc4": (320, 50, [1, 2, 320], dict(bits=4, block_size=64, symmetric=False, accuracy_level=4)),
    "int2_asym_b32": (128, 48, [2, 128], dict(bits=2, block_size=32, symmetric=False)),
    "int4_float_zero_points_b32": (96, 20, [2, 96], dict(bits=4, block_size=32, symmetric=False,
                                                         float_zero_points=True)),
    "int4_b16_acc1_rank1": (64, 16, [64], dict(bits=4, block_size=16, symmetric=False, accuracy_level=1)),
    # Prefill at accuracy_level 4 (the int8 tiles): rows 17..130, N and K not multiples of the tiles or blocks.
    "genai_b32_sym_acc4_m17": (200, 53, [1, 17, 200], dict(bits=4, block_size=32, symmetric=True, accuracy_level=4,
                                                           bias=True)),
    "genai_b32_sym_acc4_m64": (256, 100, [64, 256], dict(bits=4, block_size=32, symmetric=True, accuracy_level=4)),
    "genai_b32_sym_acc4_m128": (288, 40, [1, 128, 288], dict(bits=4, block_size=32, symmetric=True,
                                                             accuracy_level=4)),
    "genai_b32_sym_acc4_m130_nonfinite": (200, 53, [2, 65, 200], dict(bits=4, block_size=32, symmetric=True,
                                                                      accuracy_level=4, nonfinite=True)),
    "int4_asym_b64_acc4_m33": (320, 50, [33, 320], dict(bits=4, block_size=64, symmetric=False, accuracy_level=4)),
    "int8_asym_b32_acc4_m40": (160, 33, [40, 160], dict(bits=8, block_size=32, symmetric=False, accuracy_level=4)),
}


def write_case(name, k, n, a_shape, opts, rng):
    folder = os.path.join(HERE, "data", name)
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    w = (rng.standard_normal((k, n)) * 0.05).astype(np.float32)
    bias = (rng.standard_normal(n) * 0.1).astype(np.float32) if opts.pop("bias", False) else None
    nonfinite = opts.pop("nonfinite", False)
    node, inits, w_ref = make_nbits_node("proj", "A", "Y", w, bias=bias, **opts)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("A", TensorProto.FLOAT, a_shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, a_shape[:-1] + [n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    onnx.save(model, os.path.join(folder, "model.onnx"))
    a = rng.standard_normal(a_shape).astype(np.float32)
    if nonfinite:  # a NaN in one row, an infinity in another: those rows take the float32 path
        rows = a.reshape(-1, k)
        rows[5, 3] = np.nan
        rows[77, 0] = np.inf
    np.save(os.path.join(folder, "inputs", "A.npy"), a)
    ref = a.astype(np.float64) @ w_ref
    if bias is not None:
        ref = ref + bias.astype(np.float64)
    np.save(os.path.join(folder, "reference.npy"), ref)
    # The fp32 original the file was quantized from, for the accuracy comparison of accuracy_level 4.
    np.save(os.path.join(folder, "fp32_reference.npy"),
            a.astype(np.float64) @ w.astype(np.float64) + (0 if bias is None else bias.astype(np.float64)))
    if os.path.exists(ORT_RUN):
        subprocess.run([ORT_RUN, os.path.join(folder, "model.onnx"), "--inputs", os.path.join(folder, "inputs"),
                        "--out", os.path.join(folder, "ort")], check=True, stdout=subprocess.DEVNULL)


def main():
    rng = np.random.default_rng(34)
    for name, (k, n, a_shape, opts) in CASES.items():
        write_case(name, k, n, a_shape, dict(opts), rng)
        print("wrote", name)


if __name__ == "__main__":
    main()
