#!/usr/bin/env python3
"""Writes the float fixtures of the weight compression tests (tests/weights/data/):

products/model.onnx: every product form the compression pass takes, and one it leaves alone:
  Y1 = MatMul(A, B1) + bias1          A [2, 3, 80], B1 [80, 48] (K = 80: a partial last block of 32 / 64)
  Y2 = Gemm(A2, B2, C2, transB=1)     A2 [4, 80], B2 [48, 80]
  Y3 = MatMul(A, Transpose(B3))       B3 [40, 80] (a tied lm_head reads its embedding this way)
  Y4 = MatMul(A, Cast(B4, to=float))  B4 float16 [80, 24]
  Y5 = Gather(B3, ids)                the embedding: stays float
  Y6 = MatMul(A, Transpose(X))        B computed from an input: stays float
with inputs in products/inputs/*.npy, and B1 and bias1 in products/weights/*.npy (the Python test's
reference reads them without the onnx package).

Run: /usr/bin/python3 tests/weights/gen_weight_fixtures.py

gpt2_int4_b32/ is `attune quantize` of models/hf_gpt2_prefill and ONNX Runtime's outputs on it:
  attune quantize models/hf_gpt2_prefill/model.onnx tests/weights/data/gpt2_int4_b32/model.onnx \
      --weights int4 --block 32
  ../shared/tools/ort/ort-run tests/weights/data/gpt2_int4_b32/model.onnx \
      --inputs models/hf_gpt2_prefill/inputs --out tests/weights/data/gpt2_int4_b32/ort
"""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def products_model(rng):
    b1 = rng.standard_normal((80, 48)).astype(np.float32)
    b1[:, 5] *= 40.0  # one column far larger: its blocks get their own scales
    bias1 = rng.standard_normal(48).astype(np.float32)
    b2 = rng.standard_normal((48, 80)).astype(np.float32)
    c2 = rng.standard_normal(48).astype(np.float32)
    b3 = rng.standard_normal((40, 80)).astype(np.float32)
    b3[7, :] = 0.0  # an all-zero row: blocks of zeros
    b4 = rng.standard_normal((80, 24)).astype(np.float16)
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(b1, "B1"), (bias1, "bias1"), (b2, "B2"), (c2, "C2"), (b3, "B3"), (b4, "B4")]]
    nodes = [
        helper.make_node("MatMul", ["A", "B1"], ["P1"], name="proj1"),
        helper.make_node("Add", ["P1", "bias1"], ["Y1"], name="proj1_bias"),
        helper.make_node("Gemm", ["A2", "B2", "C2"], ["Y2"], name="gemm2", transB=1),
        helper.make_node("Transpose", ["B3"], ["B3T"], name="tied_t", perm=[1, 0]),
        helper.make_node("MatMul", ["A", "B3T"], ["Y3"], name="lm_head"),
        helper.make_node("Cast", ["B4"], ["B4F"], name="cast4", to=TensorProto.FLOAT),
        helper.make_node("MatMul", ["A", "B4F"], ["Y4"], name="proj4"),
        helper.make_node("Gather", ["B3", "ids"], ["Y5"], name="embed"),
        helper.make_node("Transpose", ["X"], ["XT"], name="xt", perm=[1, 0]),
        helper.make_node("MatMul", ["A", "XT"], ["Y6"], name="activation_product"),
    ]
    graph = helper.make_graph(
        nodes, "products",
        [helper.make_tensor_value_info("A", TensorProto.FLOAT, [2, 3, 80]),
         helper.make_tensor_value_info("A2", TensorProto.FLOAT, [4, 80]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3]),
         helper.make_tensor_value_info("X", TensorProto.FLOAT, [5, 80])],
        [helper.make_tensor_value_info("Y1", TensorProto.FLOAT, [2, 3, 48]),
         helper.make_tensor_value_info("Y2", TensorProto.FLOAT, [4, 48]),
         helper.make_tensor_value_info("Y3", TensorProto.FLOAT, [2, 3, 40]),
         helper.make_tensor_value_info("Y4", TensorProto.FLOAT, [2, 3, 24]),
         helper.make_tensor_value_info("Y5", TensorProto.FLOAT, [2, 3, 80]),
         helper.make_tensor_value_info("Y6", TensorProto.FLOAT, [2, 3, 5])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    inputs = {
        "A": rng.standard_normal((2, 3, 80)).astype(np.float32),
        "A2": rng.standard_normal((4, 80)).astype(np.float32),
        "ids": np.array([[0, 7, 39], [3, 3, 12]], dtype=np.int64),
        "X": rng.standard_normal((5, 80)).astype(np.float32),
    }
    return model, inputs


def main():
    rng = np.random.default_rng(34)
    model, inputs = products_model(rng)
    out = os.path.join(HERE, "data", "products")
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    onnx.save(model, os.path.join(out, "model.onnx"))
    for name, value in inputs.items():
        np.save(os.path.join(out, "inputs", name + ".npy"), value)
    os.makedirs(os.path.join(out, "weights"), exist_ok=True)
    initializers = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
    for name in ("B1", "bias1"):
        np.save(os.path.join(out, "weights", name + ".npy"), initializers[name])


if __name__ == "__main__":
    main()
