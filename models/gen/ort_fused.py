"""Build ONNX Runtime's best case for a MultiHeadAttention module: the same projections
around one standard ONNX `Attention` op (opset 23, is_causal=1, 3-D Q/K/V).

onnx 1.12 does not know opset 23, so the model is assembled with onnx.helper and never
run through the checker or shape inference."""
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _weight(name, linear):
    """torch Linear weight (out, in) as a MatMul right operand (in, out)."""
    return numpy_helper.from_array(
        np.ascontiguousarray(linear.weight.detach().numpy().T), name)


def build_attention_model(module):
    """module: attention.MultiHeadAttention (causal, no window, kv_heads == num_heads)."""
    d_in = module.W_query.in_features
    d_out = module.d_out
    inits = [_weight("W_q", module.W_query), _weight("W_k", module.W_key),
             _weight("W_v", module.W_value), _weight("W_o", module.out_proj),
             numpy_helper.from_array(module.out_proj.bias.detach().numpy().copy(), "b_o")]
    nodes = [
        helper.make_node("MatMul", ["x", "W_q"], ["q"], name="W_query/MatMul"),
        helper.make_node("MatMul", ["x", "W_k"], ["k"], name="W_key/MatMul"),
        helper.make_node("MatMul", ["x", "W_v"], ["v"], name="W_value/MatMul"),
        helper.make_node("Attention", ["q", "k", "v"], ["attn"], name="Attention",
                         is_causal=1, q_num_heads=module.num_heads,
                         kv_num_heads=module.kv_heads),
        helper.make_node("MatMul", ["attn", "W_o"], ["proj"], name="out_proj/MatMul"),
        helper.make_node("Add", ["proj", "b_o"], ["y"], name="out_proj/Add"),
    ]
    graph = helper.make_graph(
        nodes, "mha_causal_ort_fused",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", d_in])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "seq", d_out])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="attune-models",
                              opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    return model


def save(model, path):
    onnx.save_model(model, path)
