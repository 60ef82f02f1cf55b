"""Writes small ONNX models as protobuf bytes without the onnx package (Debian's python3 has none).

Only the fields these tests need: ModelProto (ir_version 1, graph 7, opset_import 8), GraphProto
(node 1, name 2, input 11, output 12), NodeProto (input 1, output 2, name 3, op_type 4,
attribute 5), AttributeProto (name 1, i 3, type 20), ValueInfoProto (name 1, type 2),
TypeProto.tensor_type 1 (elem_type 1, shape 2), TensorShapeProto.dim 1 (dim_value 1, dim_param 2).
"""

FLOAT, BOOL, FLOAT16, INT64 = 1, 9, 10, 7


def _varint(n):
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _int(field, value):
    return _varint(field << 3) + _varint(value)


def _bytes(field, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return _varint((field << 3) | 2) + _varint(len(payload)) + payload


def value_info(name, elem_type, shape):
    """shape: ints and strings (symbols)."""
    dims = b"".join(_bytes(1, _int(1, d) if isinstance(d, int) else _bytes(2, d)) for d in shape)
    tensor_type = _int(1, elem_type) + _bytes(2, dims)
    return _bytes(1, name) + _bytes(2, _bytes(1, tensor_type))


def node(op_type, inputs, outputs, name, **int_attributes):
    out = b"".join(_bytes(1, i) for i in inputs) + b"".join(_bytes(2, o) for o in outputs)
    out += _bytes(3, name) + _bytes(4, op_type)
    for key, value in int_attributes.items():
        out += _bytes(5, _bytes(1, key) + _int(3, value) + _int(20, 2))  # AttributeProto.INT
    return out


def model(nodes, inputs, outputs, opset=17):
    graph = b"".join(_bytes(1, n) for n in nodes) + _bytes(2, "test")
    graph += b"".join(_bytes(11, v) for v in inputs) + b"".join(_bytes(12, v) for v in outputs)
    return _int(1, 8) + _bytes(7, graph) + _bytes(8, _bytes(1, "") + _int(2, opset))
