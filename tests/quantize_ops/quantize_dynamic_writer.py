#!/usr/bin/env python3
"""Writes a dynamic-int8 copy of an fp32 ONNX model laid out as ONNX Runtime's
quantize_dynamic (QuantizationMode.IntegerOps) writes it, for tests and benchmarks:

  every MatMul whose B is a 2-D float32 initializer becomes
    DynamicQuantizeLinear(A) -> A_quantized, A_scale, A_zero_point   (one per distinct A, shared)
    MatMulInteger(A_quantized, B_quantized, A_zero_point, B_zero_point) -> Y_output_quantized
    Cast(to=FLOAT) -> Y_output_quantized_cast_output
    Mul(A_scale, B_scale) -> <name>_quant_scales_mul:0
    Mul(cast, scales_mul) -> Y                                      (any bias Add stays as it was)
  weights: int8 symmetric (qmin -127, qmax 127, zero point 0; scale = max|w| / 127) or uint8
  asymmetric (range widened to hold 0, scale = (max - min) / 255, zero point round(-min / scale));
  per tensor, or per column (axis 1) with --per-channel; values round(w / scale) + zero point
  (numpy's round: half to even), clipped. Gemm is left alone, as quantize_dynamic leaves it.

usage: quantize_dynamic_writer.py IN.onnx OUT.onnx [--weight-type int8|uint8] [--per-channel]
"""
import argparse

import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def quantize_weight(w, weight_type, per_channel):
    if per_channel:
        cols = [quantize_weight(w[:, j:j + 1], weight_type, False) for j in range(w.shape[1])]
        q = np.concatenate([c[0] for c in cols], axis=1)
        return q, np.array([c[1] for c in cols], np.float32), np.array([c[2] for c in cols], cols[0][0].dtype)
    w = w.astype(np.float32)
    if weight_type == "int8":
        absmax = np.float32(max(abs(float(w.min())), abs(float(w.max())), 0.0))
        rmin, rmax, qmin, qmax, dtype = -absmax, absmax, -127, 127, np.int8
        scale = np.float32((rmax - rmin) / np.float32(qmax - qmin))
        zero_point = 0
    else:
        rmin, rmax = np.float32(min(float(w.min()), 0.0)), np.float32(max(float(w.max()), 0.0))
        qmin, qmax, dtype = 0, 255, np.uint8
        scale = np.float32((rmax - rmin) / np.float32(qmax - qmin))
        zero_point = int(np.round(qmin - rmin / scale)) if scale != 0 else 0
    if scale == 0:
        scale, zero_point = np.float32(1.0), 0
    q = np.clip((w / scale).round() + zero_point, qmin, qmax).astype(dtype)
    return q, scale, np.array(zero_point, dtype)


def quantize_dynamic(model, weight_type="int8", per_channel=False):
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    new_nodes, new_inits, dql_of = [], [], {}
    for node in graph.node:
        b = inits.get(node.input[1]) if node.op_type == "MatMul" and len(node.input) == 2 else None
        if b is None or b.data_type != TensorProto.FLOAT or len(b.dims) != 2:
            new_nodes.append(node)
            continue
        a = node.input[0]
        if a not in dql_of:
            outs = [a + "_quantized", a + "_scale", a + "_zero_point"]
            new_nodes.append(helper.make_node("DynamicQuantizeLinear", [a], outs, a + "_QuantizeLinear"))
            dql_of[a] = outs
        qa, sa, za = dql_of[a]
        q, scale, zp = quantize_weight(numpy_helper.to_array(b), weight_type, per_channel)
        new_inits += [numpy_helper.from_array(q, b.name + "_quantized"),
                      numpy_helper.from_array(np.asarray(scale, np.float32), b.name + "_scale"),
                      numpy_helper.from_array(np.asarray(zp), b.name + "_zero_point")]
        name = node.name + "_quant"
        y = node.output[0]
        new_nodes += [
            helper.make_node("MatMulInteger", [qa, b.name + "_quantized", za, b.name + "_zero_point"],
                             [y + "_output_quantized"], name),
            helper.make_node("Cast", [y + "_output_quantized"], [y + "_output_quantized_cast_output"],
                             y + "_output_quantized_cast", to=TensorProto.FLOAT),
            helper.make_node("Mul", [sa, b.name + "_scale"], [name + "_scales_mul:0"], name + "_scales_mul"),
            helper.make_node("Mul", [y + "_output_quantized_cast_output", name + "_scales_mul:0"], [y],
                             name + "_output_scale_mul"),
        ]
    used = {i for n in new_nodes for i in n.input}
    keep = [t for t in graph.initializer if t.name in used]
    del graph.node[:]
    graph.node.extend(new_nodes)
    del graph.initializer[:]
    graph.initializer.extend(keep + [t for t in new_inits if t.name in used])
    if not any(o.domain in ("", "ai.onnx") and o.version >= 11 for o in model.opset_import):
        for o in model.opset_import:
            if o.domain in ("", "ai.onnx"):
                o.version = 11
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("input")
    p.add_argument("output")
    p.add_argument("--weight-type", choices=["int8", "uint8"], default="int8")
    p.add_argument("--per-channel", action="store_true")
    args = p.parse_args()
    model = onnx.load(args.input)
    quantize_dynamic(model, args.weight_type, args.per_channel)
    onnx.save(model, args.output)


if __name__ == "__main__":
    main()
