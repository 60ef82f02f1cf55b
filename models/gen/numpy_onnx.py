"""A small NumPy evaluator of ONNX graphs, the reference outputs of the graphs written with onnx.helper
(ort_forms.py): Debian's onnx 1.12 has no reference evaluator, and those graphs have no PyTorch module.

Only the ops those graphs use, with their ONNX semantics at opsets 13-17; float32 arithmetic as ONNX
runs it (each op rounds to float32), softmax and layer norm accumulated in float64.
"""
import numpy as np
from onnx import numpy_helper

NP_TYPES = {1: np.float32, 6: np.int32, 7: np.int64, 9: np.bool_, 10: np.float16, 2: np.uint8, 11: np.float64}


def _attrs(node):
    out = {}
    for a in node.attribute:
        if a.type == a.INT:
            out[a.name] = a.i
        elif a.type == a.FLOAT:
            out[a.name] = a.f
        elif a.type == a.INTS:
            out[a.name] = list(a.ints)
        elif a.type == a.STRING:
            out[a.name] = a.s.decode()
    return out


def _reshape(x, shape):
    shape = [x.shape[i] if s == 0 else s for i, s in enumerate(shape.tolist())]
    return x.reshape(shape)


def _slice(x, starts, ends, axes=None, steps=None):
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts.tolist(), ends.tolist(), list(axes), list(steps)):
        index[a] = slice(int(s), int(min(e, 2**62)), int(st))
    return x[tuple(index)]


def _softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(np.float32)


def _layer_norm(x, w, b, axis=-1, epsilon=1e-5):
    axes = tuple(range(axis % x.ndim, x.ndim))
    x64 = x.astype(np.float64)
    mean = x64.mean(axis=axes, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=axes, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + epsilon) * w + b).astype(np.float32)


def _f32(v):
    return v.astype(np.float32) if v.dtype == np.float64 else v


def run_node(op, ins, at):
    if op in ("Add", "Sub", "Mul", "Div"):
        a, b = ins
        r = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}[op](a, b)
        if a.dtype.kind in "iu" and op == "Div":
            r = a // b
        return [r.astype(np.result_type(a, b))]
    if op == "MatMul":
        return [np.matmul(ins[0], ins[1])]
    if op == "Gemm":
        a, b = ins[0], ins[1]
        a = a.T if at.get("transA") else a
        b = b.T if at.get("transB") else b
        r = at.get("alpha", 1.0) * (a @ b)
        if len(ins) > 2:
            r = r + at.get("beta", 1.0) * ins[2]
        return [r.astype(np.float32)]
    if op == "Reshape":
        return [_reshape(ins[0], ins[1])]
    if op == "Transpose":
        return [np.transpose(ins[0], at.get("perm"))]
    if op == "Softmax":
        return [_softmax(ins[0], at.get("axis", -1))]
    if op == "LayerNormalization":
        return [_layer_norm(ins[0], ins[1], ins[2] if len(ins) > 2 else 0.0, at.get("axis", -1),
                            at.get("epsilon", 1e-5))]
    if op == "Unsqueeze":
        x = ins[0]
        for a in sorted(int(v) for v in ins[1].tolist()):
            x = np.expand_dims(x, a if a >= 0 else a + x.ndim + 1)
        return [x]
    if op == "Squeeze":
        return [np.squeeze(ins[0], axis=tuple(int(v) for v in ins[1].tolist()))]
    if op == "Cast":
        return [ins[0].astype(NP_TYPES[at["to"]])]
    if op == "Split":
        parts = np.cumsum(ins[1].tolist())[:-1]
        return list(np.split(ins[0], parts, axis=at.get("axis", 0)))
    if op == "Concat":
        return [np.concatenate(ins, axis=at["axis"])]
    if op == "Shape":
        return [np.array(ins[0].shape, dtype=np.int64)]
    if op == "Slice":
        return [_slice(*ins)]
    if op == "Where":
        return [np.where(ins[0], ins[1], ins[2])]
    if op == "Gather":
        return [np.take(ins[0], ins[1], axis=at.get("axis", 0))]
    if op == "IsNaN":
        return [np.isnan(ins[0])]
    if op == "Sqrt":
        return [np.sqrt(ins[0])]
    if op == "Einsum":
        return [np.einsum(at["equation"], *ins).astype(np.float32)]
    raise NotImplementedError(op)


def evaluate(model, feeds):
    """{output name: array} of `model` (an onnx.ModelProto) on `feeds` ({input name: array})."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        ins = [env[n] if n else None for n in node.input]
        while ins and ins[-1] is None:
            ins.pop()
        outs = run_node(node.op_type, ins, _attrs(node))
        for name, value in zip(node.output, outs):
            env[name] = _f32(np.asarray(value))
    return {o.name: env[o.name] for o in model.graph.output}
