#!/usr/bin/env python3
"""Writes the dynamic-int8 fixtures of tests/quantize_ops/data/: a small fp32 MLP block
(two products sharing their input, a bias Add, Relu, a second layer), quantized by
quantize_dynamic_writer.py in three layouts, with one input, and ONNX Runtime's outputs on
each file when ../shared/tools/ort/ort-run is there (the committed .npy files are those).

usage: gen_fixtures.py [--ort PATH_TO_ort-run]
"""
import argparse
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from quantize_dynamic_writer import quantize_dynamic  # noqa: E402


def fp32_block(d=48, hidden=96, seed=0):
    rng = np.random.default_rng(seed)
    w = lambda *s: (rng.standard_normal(s) * 0.2).astype(np.float32)
    inits = [numpy_helper.from_array(w(d, hidden), "fc1.weight"), numpy_helper.from_array(w(hidden), "fc1.bias"),
             numpy_helper.from_array(w(d, hidden), "gate.weight"),
             numpy_helper.from_array(w(hidden, d), "fc2.weight"), numpy_helper.from_array(w(d), "fc2.bias")]
    nodes = [
        helper.make_node("MatMul", ["x", "fc1.weight"], ["fc1_mm"], "/fc1/MatMul"),
        helper.make_node("Add", ["fc1.bias", "fc1_mm"], ["fc1_out"], "/fc1/Add"),
        helper.make_node("MatMul", ["x", "gate.weight"], ["gate_out"], "/gate/MatMul"),
        helper.make_node("Relu", ["gate_out"], ["gate_act"], "/act/Relu"),
        helper.make_node("Mul", ["fc1_out", "gate_act"], ["h"], "/mul/Mul"),
        helper.make_node("MatMul", ["h", "fc2.weight"], ["fc2_mm"], "/fc2/MatMul"),
        helper.make_node("Add", ["fc2_mm", "fc2.bias"], ["y"], "/fc2/Add"),
    ]
    graph = helper.make_graph(nodes, "mlp_block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", d])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ort", default=os.path.join(HERE, "../../../shared/tools/ort/ort-run"))
    args = p.parse_args()
    out = os.path.join(HERE, "data")
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((2, 7, 48)) * 1.5).astype(np.float32)
    x[0, 0, 0] = 6.0  # one outlier stretches the activation range
    np.save(os.path.join(out, "inputs", "x.npy"), x)
    for name, wt, pc in [("int8_tensor", "int8", False), ("int8_channel", "int8", True),
                         ("uint8_channel", "uint8", True)]:
        model = quantize_dynamic(fp32_block(), wt, pc)
        onnx.checker.check_model(model)
        path = os.path.join(out, f"mlp_{name}.onnx")
        onnx.save(model, path)
        if os.path.exists(args.ort):
            ref = os.path.join(out, f"ort_{name}")
            subprocess.run([args.ort, path, "--inputs", os.path.join(out, "inputs"), "--out", ref], check=True)


if __name__ == "__main__":
    main()
