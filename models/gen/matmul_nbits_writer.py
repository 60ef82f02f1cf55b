"""Writes com.microsoft.MatMulNBits weights the way the common ONNX writers do.

Block-wise quantization of a float32 MatMul weight W[K, N] along K, laid out
as ONNX Runtime's MatMulNBitsQuantizer stores it: B uint8 [N, k_blocks,
block*bits/8] (values of one block packed along K, lowest bits first),
scales [N * k_blocks] (or [N, k_blocks]), zero points uint8 packed per row
[N * ceil(k_blocks*bits/8)] when asymmetric, none when symmetric
(the kernel's default zero point is 2^(bits-1)).

Conventions (CONVENTIONS below):
- "ort":   MatMulNBitsQuantizer defaults: block 128, asymmetric, accuracy_level unset.
- "genai": onnxruntime-genai model builder for CPU int4: block 32, symmetric, accuracy_level 4.
- "tfjs":  transformers.js model_q4: block 32, symmetric, accuracy_level unset.
"""
import numpy as np
import onnx
from onnx import helper, numpy_helper

CONVENTIONS = {
    "ort": dict(block_size=128, symmetric=False, accuracy_level=None),
    "genai": dict(block_size=32, symmetric=True, accuracy_level=4),
    "tfjs": dict(block_size=32, symmetric=True, accuracy_level=None),
}


def quantize_blocks(w, bits=4, block_size=32, symmetric=False, float_zero_points=False):
    """W [K, N] float32 -> (q uint8 [N, k_blocks, block] values, scales [N, k_blocks], zp [N, k_blocks] or None)."""
    k, n = w.shape
    k_blocks = (k + block_size - 1) // block_size
    padded = np.zeros((k_blocks * block_size, n), dtype=np.float32)
    padded[:k] = w
    blocks = padded.T.reshape(n, k_blocks, block_size).astype(np.float64)
    levels = (1 << bits) - 1
    mid = 1 << (bits - 1)
    if symmetric:
        vmax, vmin = blocks.max(axis=2), blocks.min(axis=2)
        absmax = np.where(np.abs(vmax) > np.abs(vmin), vmax, vmin)  # signed, as the quantizer takes it
        scales = (absmax / -mid).astype(np.float32)
        s = scales.astype(np.float64)[..., None]
        q = np.where(s == 0, 0, np.round(blocks / np.where(s == 0, 1, s))) + mid
        q = np.clip(q, 0, levels)
        zp = None
    else:
        vmin = np.minimum(blocks.min(axis=2), 0)
        vmax = np.maximum(blocks.max(axis=2), 0)
        scales = ((vmax - vmin) / levels).astype(np.float32)
        s = scales.astype(np.float64)
        safe = np.where(s == 0, 1, s)
        zp_f = np.where(s == 0, mid, -vmin / safe)
        zp = zp_f if float_zero_points else np.clip(np.round(zp_f), 0, levels)
        q = np.where(s[..., None] == 0, mid, np.round(blocks / safe[..., None] + np.round(zp)[..., None]))
        q = np.clip(q, 0, levels)
        zp = zp.astype(np.float32) if float_zero_points else zp.astype(np.uint8)
    return q.astype(np.uint8), scales, zp


def pack_values(values, bits):
    """Packs the last axis of uint8 values (each < 2^bits) into bytes, lowest bits first."""
    per_byte = 8 // bits
    length = values.shape[-1]
    padded_len = (length + per_byte - 1) // per_byte * per_byte
    v = np.zeros(values.shape[:-1] + (padded_len,), dtype=np.uint16)
    v[..., :length] = values
    v = v.reshape(values.shape[:-1] + (padded_len // per_byte, per_byte))
    out = np.zeros(v.shape[:-1], dtype=np.uint16)
    for i in range(per_byte):
        out |= v[..., i] << (i * bits)
    return out.astype(np.uint8)


def dequantize(q, scales, zp, bits, k):
    """The reference weight W[K, N] (float64) of quantized blocks, as the op defines it."""
    n, k_blocks, block = q.shape
    z = np.full((n, k_blocks), float(1 << (bits - 1))) if zp is None else zp.astype(np.float64)
    w = (q.astype(np.float64) - z[..., None]) * scales.astype(np.float64)[..., None]
    return w.reshape(n, k_blocks * block)[:, :k].T


def make_nbits_node(name, a_name, out_name, w, bits=4, block_size=32, symmetric=False, accuracy_level=None,
                    bias=None, float_zero_points=False, flat_scales=True, scale_dtype=np.float32):
    """A MatMulNBits node and its initializers replacing MatMul(a, w) [+ bias]."""
    k, n = w.shape
    q, scales, zp = quantize_blocks(w, bits, block_size, symmetric, float_zero_points)
    b = pack_values(q, bits)  # [N, k_blocks, blob]
    inits = [numpy_helper.from_array(b, name + f"_Q{bits}")]
    sc = scales.astype(scale_dtype)
    inits.append(numpy_helper.from_array(sc.reshape(-1) if flat_scales else sc, name + "_scales"))
    inputs = [a_name, inits[0].name, inits[1].name]
    if zp is not None:
        if float_zero_points:
            zpt = zp.astype(scale_dtype)
        else:
            zpt = pack_values(zp, bits)
            zpt = zpt.reshape(-1) if flat_scales else zpt
        inits.append(numpy_helper.from_array(zpt, name + "_zero_points"))
        inputs.append(inits[-1].name)
    if bias is not None:
        while len(inputs) < 5:
            inputs.append("")
        inits.append(numpy_helper.from_array(bias.astype(scale_dtype), name + "_bias"))
        inputs.append(inits[-1].name)
    attrs = dict(K=k, N=n, bits=bits, block_size=block_size)
    if accuracy_level is not None:
        attrs["accuracy_level"] = accuracy_level
    node = helper.make_node("MatMulNBits", inputs, [out_name], name=name + f"_Q{bits}", domain="com.microsoft",
                            **attrs)
    zp_value = None if zp is None else zp
    return node, inits, dequantize(q, scales.astype(scale_dtype).astype(np.float32), zp_value, bits, k)


def _gemm_weight(node, inits):
    """(W [K, N], bias or None) of a Gemm that is A·W + bias with constant W, else None."""
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    if attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0 or attrs.get("transA", 0):
        return None
    b = inits.get(node.input[1])
    if b is None or len(b.dims) != 2 or b.data_type != onnx.TensorProto.FLOAT:
        return None
    w = numpy_helper.to_array(b)
    if attrs.get("transB", 0):
        w = w.T
    bias = None
    if len(node.input) > 2 and node.input[2]:
        c = inits.get(node.input[2])
        if c is None or list(c.dims) != [w.shape[1]]:
            return None
        bias = numpy_helper.to_array(c)
    return np.ascontiguousarray(w), bias


def quantize_model(model, bits=4, block_size=32, symmetric=False, accuracy_level=None, min_elements=0,
                   include_gemm=True):
    """Replaces every MatMul whose B is a 2-D float32 initializer by MatMulNBits, in place, as ONNX
    Runtime's quantizer does; with include_gemm, also Gemm(A, W, bias) with constant W and a [N] bias
    (torch's addmm, GPT-2's Conv1D) as MatMulNBits with its bias input, which is what the genai
    builder writes for a biased projection."""
    graph = model.graph
    inits = {t.name: t for t in graph.initializer}
    uses = {}
    for node in graph.node:
        for i in node.input:
            uses[i] = uses.get(i, 0) + 1
    # A tied lm_head reads its weight as Transpose(wte): quantized as the genai builder writes it
    # (its own MatMulNBits; the embedding keeps the float32 table).
    # Initializers torch's exporter shares through Identity nodes count as the initializer.
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in inits:
            inits[node.output[0]] = inits[node.input[0]]
    transposed = {}
    for node in graph.node:
        perm = [list(a.ints) for a in node.attribute if a.name == "perm"]
        if node.op_type == "Transpose" and node.input[0] in inits and perm in ([], [[1, 0]]):
            transposed[node.output[0]] = node.input[0]
    new_nodes, dropped = [], set()
    for node in graph.node:
        found = None
        if node.op_type == "MatMul" and len(node.input) == 2:
            b = inits.get(node.input[1])
            if b is None and node.input[1] in transposed:
                t = inits[transposed[node.input[1]]]
                if len(t.dims) == 2 and t.data_type == onnx.TensorProto.FLOAT:
                    found = (np.ascontiguousarray(numpy_helper.to_array(t).T), None)
            elif b is not None and len(b.dims) == 2 and b.data_type == onnx.TensorProto.FLOAT:
                found = (numpy_helper.to_array(b), None)
        elif node.op_type == "Gemm" and include_gemm:
            found = _gemm_weight(node, inits)
        if found is None or found[0].size < min_elements:
            new_nodes.append(node)
            continue
        w, bias = found
        base = node.name or node.output[0]
        qnode, qinits, _ = make_nbits_node(base, node.input[0], node.output[0], w, bits, block_size, symmetric,
                                           accuracy_level, bias=bias)
        new_nodes.append(qnode)
        graph.initializer.extend(qinits)
        for name in node.input[1:]:
            if name in inits:
                uses[name] -= 1
                if uses[name] == 0:
                    dropped.add(name)
    del graph.node[:]
    graph.node.extend(new_nodes)
    kept = [t for t in graph.initializer if t.name not in dropped]
    del graph.initializer[:]
    graph.initializer.extend(kept)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def main():
    import argparse
    ap = argparse.ArgumentParser(description="Quantize the MatMul (and Gemm) weights of an ONNX file to MatMulNBits.")
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--convention", choices=sorted(CONVENTIONS), default="ort")
    ap.add_argument("--bits", type=int, default=4, choices=[2, 4, 8])
    ap.add_argument("--no-gemm", action="store_true", help="leave Gemm nodes alone (as ONNX Runtime's quantizer does)")
    args = ap.parse_args()
    model = onnx.load(args.input)
    conv = CONVENTIONS[args.convention]
    quantize_model(model, bits=args.bits, include_gemm=not args.no_gemm, **conv)
    onnx.save(model, args.output)
    n = sum(1 for node in model.graph.node if node.op_type == "MatMulNBits")
    print(f"wrote {args.output}: {n} MatMulNBits ({args.convention}: {conv})")


if __name__ == "__main__":
    main()
