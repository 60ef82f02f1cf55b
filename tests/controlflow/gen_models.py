#!/usr/bin/env python3
"""Writes the control-flow test models (If, Loop, Scan with subgraphs) and
their inputs into data/<case>/; expected outputs come from ONNX Runtime:

    python3 tests/controlflow/gen_models.py
    for d in tests/controlflow/data/*/; do for i in "$d"inputs*/; do
      /work/shared/tools/ort/ort-run "$d"model.onnx --inputs "$i" --out "${i/inputs/expected}"; done; done

The bad_* models are refused at load or at run time; they have no expected outputs."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
F, B, I64 = TensorProto.FLOAT, TensorProto.BOOL, TensorProto.INT64


def vi(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def save(case, graph, inputs=None, opset=17):
    d = os.path.join(HERE, case)
    os.makedirs(d, exist_ok=True)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="gen_models.py")
    model.ir_version = 8
    onnx.save(model, os.path.join(d, "model.onnx"))
    for suffix, feeds in (inputs or {}).items():
        idir = os.path.join(d, "inputs" + suffix)
        os.makedirs(idir, exist_ok=True)
        for name, value in feeds.items():
            np.save(os.path.join(idir, name + ".npy"), value)


def if_outer_scope():
    # then: x + a, where a = 2x is computed in the main graph, plus an inner If
    # (two levels down) that reads b from the main graph; else: Concat(x, b),
    # twice as long as the then branch's result.
    inner_then = helper.make_graph([helper.make_node("Mul", ["b", "b"], ["bb"])], "inner_then", [], [vi("bb", F)])
    inner_else = helper.make_graph([helper.make_node("Neg", ["b"], ["nb"])], "inner_else", [], [vi("nb", F)])
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "a"], ["xa"]),
         helper.make_node("If", ["cond"], ["inner"], then_branch=inner_then, else_branch=inner_else),
         helper.make_node("Add", ["xa", "inner"], ["then_out"])],
        "then", [], [vi("then_out", F)])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "b"], ["else_out"], axis=0)], "else", [],
                               [vi("else_out", F)])
    nodes = [helper.make_node("Mul", ["x", "two"], ["a"]),
             helper.make_node("Sub", ["x", "one"], ["b"]),
             helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Mul", ["y", "two"], ["z"])]
    inits = [helper.make_tensor("two", F, [], [2.0]), helper.make_tensor("one", F, [], [1.0])]
    g = helper.make_graph(nodes, "if_outer_scope", [vi("cond", B, []), vi("x", F, [3])], [vi("z", F, None)], inits)
    x = np.array([0.5, -1.25, 3.0], np.float32)
    save("if_outer_scope", g, {"_true": {"cond": np.array(True), "x": x}, "_false": {"cond": np.array(False), "x": x}})


def if_twins():
    # Two If nodes on the same cond and input whose branches differ: common-
    # subexpression elimination must not merge them.
    def branch(op, name, const):
        return helper.make_graph([helper.make_node(op, ["x", "k"], [name])], name, [], [vi(name, F)],
                                 [helper.make_tensor("k", F, [], [const])])
    nodes = [helper.make_node("If", ["cond"], ["y1"], then_branch=branch("Add", "t1", 1.0),
                              else_branch=branch("Sub", "e1", 1.0)),
             helper.make_node("If", ["cond"], ["y2"], then_branch=branch("Mul", "t2", 3.0),
                              else_branch=branch("Div", "e2", 3.0))]
    g = helper.make_graph(nodes, "if_twins", [vi("cond", B, []), vi("x", F, [2])], [vi("y1", F, None),
                                                                                    vi("y2", F, None)])
    save("if_twins", g, {"": {"cond": np.array(True), "x": np.array([2.0, -4.0], np.float32)}})


def loop_body(scan=True, stop_after=None):
    # iter, cond_in, sum -> cond_out, sum + step * iter, [sum + ...] per iteration
    nodes = [helper.make_node("Cast", ["iter"], ["iter_f"], to=F),
             helper.make_node("Mul", ["iter_f", "step"], ["inc"]),
             helper.make_node("Add", ["sum_in", "inc"], ["sum_out"])]
    outputs = [vi("cond_out", B, []), vi("sum_out", F, [2])]
    if stop_after is None:
        nodes.append(helper.make_node("Identity", ["cond_in"], ["cond_out"]))
    else:
        nodes.append(helper.make_node("Less", ["iter", "limit"], ["cond_out"]))
    if scan:
        nodes.append(helper.make_node("Mul", ["sum_out", "sum_out"], ["sq"]))
        outputs.append(vi("sq", F, [2]))
    return helper.make_graph(nodes, "body", [vi("iter", I64, []), vi("cond_in", B, []), vi("sum_in", F, [2])], outputs)


def loop_early_exit():
    # M = 10, but the body's condition (iter < limit, limit from the main
    # graph) turns false after iteration 4: five iterations run.
    body = loop_body(scan=True, stop_after=True)
    nodes = [helper.make_node("Loop", ["M", "cond", "sum0"], ["sum", "squares"], body=body)]
    inits = [helper.make_tensor("limit", I64, [], [4])]
    g = helper.make_graph(nodes, "loop_early_exit",
                          [vi("M", I64, []), vi("cond", B, []), vi("sum0", F, [2]), vi("step", F, [2])],
                          [vi("sum", F, [2]), vi("squares", F, None)], inits)
    feeds = {"M": np.array(10, np.int64), "cond": np.array(True), "sum0": np.array([1.0, -2.0], np.float32),
             "step": np.array([0.5, 0.25], np.float32)}
    few = dict(feeds, M=np.array(3, np.int64))
    save("loop_early_exit", g, {"": feeds, "_trip3": few})


def loop_unbounded():
    # M = 2^62 and a condition that stays true: bounded only by the session.
    body = loop_body(scan=False, stop_after=None)
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "sum0"], ["sum"], body=body)], "loop_unbounded",
                          [vi("M", I64, []), vi("sum0", F, [2]), vi("step", F, [2])], [vi("sum", F, [2])])
    save("loop_unbounded", g, {"": {"M": np.array(2**62, np.int64), "sum0": np.zeros(2, np.float32),
                                    "step": np.ones(2, np.float32)}})
    body = loop_body(scan=True, stop_after=None)
    g = helper.make_graph([helper.make_node("Loop", ["", "cond", "sum0"], ["sum", "squares"], body=body)],
                          "loop_unbounded_scan", [vi("cond", B, []), vi("sum0", F, [2]), vi("step", F, [2])],
                          [vi("sum", F, [2]), vi("squares", F, None)])
    save("loop_unbounded_scan", g, {"": {"cond": np.array(True), "sum0": np.zeros(2, np.float32),
                                         "step": np.ones(2, np.float32)}})


def scan_axes():
    # One state; scan input a [2, 4] sliced along axis 1 forward, c [4, 3]
    # along axis 0 in reverse; outputs stacked along axis 1 reversed and axis 0.
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["a_t"], ["a_sum"], keepdims=0),
         helper.make_node("Add", ["state_in", "a_sum"], ["s1"]),
         helper.make_node("Mul", ["s1", "c_t"], ["state_out"]),
         helper.make_node("Add", ["a_t", "w"], ["y1"]),
         helper.make_node("Identity", ["state_out"], ["y2"])],
        "scan_body", [vi("state_in", F, [3]), vi("a_t", F, [2]), vi("c_t", F, [3])],
        [vi("state_out", F, [3]), vi("y1", F, [2]), vi("y2", F, [3])])
    node = helper.make_node("Scan", ["s0", "a", "c"], ["s", "y1s", "y2s"], body=body, num_scan_inputs=2,
                            scan_input_axes=[1, 0], scan_input_directions=[0, 1], scan_output_axes=[1, -2],
                            scan_output_directions=[1, 0])
    g = helper.make_graph([node], "scan_axes", [vi("s0", F, [3]), vi("a", F, [2, 4]), vi("c", F, [4, 3]),
                                                vi("w", F, [2])],
                          [vi("s", F, [3]), vi("y1s", F, None), vi("y2s", F, None)])
    rng = np.random.default_rng(3)
    feeds = {"s0": rng.standard_normal(3).astype(np.float32), "a": rng.standard_normal((2, 4)).astype(np.float32),
             "c": (0.5 * rng.standard_normal((4, 3))).astype(np.float32),
             "w": np.array([10.0, -10.0], np.float32)}
    save("scan_axes", g, {"": feeds})


def bad_models():
    then_g = helper.make_graph([helper.make_node("Add", ["x", "ghost"], ["t"], name="reads_ghost")], "then", [],
                               [vi("t", F)])
    else_g = helper.make_graph([helper.make_node("Identity", ["x"], ["e"])], "else", [], [vi("e", F)])
    g = helper.make_graph([helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g,
                                            else_branch=else_g)],
                          "bad", [vi("cond", B, []), vi("x", F, [3])], [vi("y", F, None)])
    save("bad_missing_outer", g, {"": {"cond": np.array(True), "x": np.ones(3, np.float32)}})

    body = helper.make_graph([helper.make_node("Identity", ["c"], ["c_out"]),
                              helper.make_node("Identity", ["c"], ["v_out"])],
                             "body", [vi("i", I64, []), vi("c", B, [])], [vi("c_out", B, []), vi("v_out", B, [])])
    g = helper.make_graph([helper.make_node("Loop", ["M", "", "v"], ["v_final"], name="loop", body=body)], "bad",
                          [vi("M", I64, []), vi("v", F, [2])], [vi("v_final", F, None)])
    save("bad_body_inputs", g, {"": {"M": np.array(2, np.int64), "v": np.ones(2, np.float32)}})

    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t"])], "then", [], [vi("t", F)])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [], [vi("e", F)])
    g = helper.make_graph([helper.make_node("If", ["cond"], ["y"], name="if", then_branch=then_g,
                                            else_branch=else_g)],
                          "bad", [vi("cond", F, [2]), vi("x", F, [3])], [vi("y", F, None)])
    save("bad_cond_type", g, {"": {"cond": np.array([1.0, 0.0], np.float32), "x": np.ones(3, np.float32)}})

    inner = helper.make_graph([helper.make_node("Identity", ["x"], ["out0"])], "level0", [], [vi("out0", F)])
    for level in range(1, 21):
        other = helper.make_graph([helper.make_node("Neg", ["x"], [f"neg{level}"])], f"other{level}", [],
                                  [vi(f"neg{level}", F)])
        inner = helper.make_graph([helper.make_node("If", ["cond"], [f"out{level}"], name=f"if{level}",
                                                    then_branch=inner, else_branch=other)],
                                  f"level{level}", [], [vi(f"out{level}", F)])
    g = helper.make_graph(inner.node, "deep", [vi("cond", B, []), vi("x", F, [3])], [vi("out20", F, None)])
    save("bad_deep_nesting", g, {"": {"cond": np.array(True), "x": np.ones(3, np.float32)}})


if __name__ == "__main__":
    if_outer_scope()
    if_twins()
    loop_early_exit()
    loop_unbounded()
    scan_axes()
    bad_models()
