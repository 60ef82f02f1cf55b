#!/usr/bin/env python3
"""Writes tests/weights/data/whole_fp16/: a tiny whole-float16 model as
onnxconverter-common's convert_float_to_float16(keep_io_types=True) lays one
out (float16 initializers clipped to the float16 range, float16 activations,
Casts only at the float inputs and outputs), from this float32 graph:

  H = Tanh(Gemm(X, W1, c1))            X [4, 16], W1 [16, 32], c1 [32]
  Y = MatMul(H, W2) + b2               W2 [32, 24], b2 [24]
  logits = MatMul(Y, Transpose(E))     E [50, 24] (a tied lm_head's form)
  scores = MatMul(Y, Transpose(Y))     both operands computed
  hidden = G, the Gemm's output (Tanh would hide an overflow)

Inputs: inputs/X.npy (normal values, one NaN in row 3) and inputs_big/X.npy
(large values: some float32 sums pass 65504 and the float16 outputs are ±inf).
Expected outputs are ONNX Runtime's on the same file:
  ../shared/tools/ort/ort-run tests/weights/data/whole_fp16/model.onnx \
      --inputs tests/weights/data/whole_fp16/inputs --out tests/weights/data/whole_fp16/ort
  (and inputs_big -> ort_big)

Run: /usr/bin/python3 tests/weights/gen_whole_fp16_fixture.py
"""
import os

import numpy as np
import onnx
from onnx import TensorProto as TP, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "whole_fp16")


def half(name, a):
    return numpy_helper.from_array(np.clip(a, -65504, 65504).astype(np.float16), name)


def main():
    rng = np.random.default_rng(34)
    F, H = TP.FLOAT, TP.FLOAT16
    inits = [half("W1", rng.normal(0, 0.3, (16, 32))), half("c1", rng.normal(0, 0.1, 32)),
             half("W2", rng.normal(0, 0.3, (32, 24))), half("b2", rng.normal(0, 0.1, 24)),
             half("E", rng.normal(0, 1.0, (50, 24)))]
    nodes = [
        helper.make_node("Cast", ["X"], ["X_fp16"], to=H, name="graph_input_cast_X"),
        helper.make_node("Gemm", ["X_fp16", "W1", "c1"], ["G"], name="fc1"),
        helper.make_node("Tanh", ["G"], ["Hh"], name="act"),
        helper.make_node("MatMul", ["Hh", "W2"], ["P2"], name="fc2"),
        helper.make_node("Add", ["P2", "b2"], ["Y"], name="fc2_bias"),
        helper.make_node("Transpose", ["E"], ["Et"], perm=[1, 0], name="tied"),
        helper.make_node("MatMul", ["Y", "Et"], ["logits_fp16"], name="lm_head"),
        helper.make_node("Transpose", ["Y"], ["Yt"], perm=[1, 0], name="yt"),
        helper.make_node("MatMul", ["Y", "Yt"], ["scores_fp16"], name="self_product"),
        helper.make_node("Cast", ["logits_fp16"], ["logits"], to=F, name="graph_output_cast_logits"),
        helper.make_node("Cast", ["scores_fp16"], ["scores"], to=F, name="graph_output_cast_scores"),
        helper.make_node("Cast", ["G"], ["hidden"], to=F, name="graph_output_cast_hidden"),
    ]
    graph = helper.make_graph(nodes, "whole_fp16", [helper.make_tensor_value_info("X", F, [4, 16])],
                              [helper.make_tensor_value_info("logits", F, [4, 50]),
                               helper.make_tensor_value_info("scores", F, [4, 4]),
                               helper.make_tensor_value_info("hidden", F, [4, 32])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(OUT, "inputs"), exist_ok=True)
    os.makedirs(os.path.join(OUT, "inputs_big"), exist_ok=True)
    onnx.save(model, os.path.join(OUT, "model.onnx"))
    x = rng.normal(0, 1.0, (4, 16)).astype(np.float32)
    x[3, 5] = np.nan
    np.save(os.path.join(OUT, "inputs", "X.npy"), x)
    big = np.clip(rng.normal(0, 1.0, (4, 16)) * 30000, -65000, 65000).astype(np.float32)
    np.save(os.path.join(OUT, "inputs_big", "X.npy"), big)


if __name__ == "__main__":
    main()
