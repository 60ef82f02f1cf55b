#!/usr/bin/python3
"""Print the op-type histogram of each model (or of the given .onnx files).

usage: /usr/bin/python3 models/gen/op_histogram.py [--nodes] [MODEL.onnx ...]
--nodes also lists every node: op, inputs -> outputs, attributes (not tensor values).
"""
import argparse
import collections
import glob
import os

import onnx


def describe(node):
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute
             if a.type != onnx.AttributeProto.TENSOR}
    return f"{node.op_type:12s} {list(node.input)} -> {list(node.output)} {attrs or ''}"


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", action="store_true")
    ap.add_argument("models", nargs="*")
    args = ap.parse_args()
    paths = args.models or sorted(glob.glob(os.path.join(os.path.dirname(here), "**",
                                                         "model.onnx"), recursive=True))
    for path in paths:
        graph = onnx.load(path, load_external_data=False).graph
        hist = collections.Counter(n.op_type for n in graph.node)
        print(f"{os.path.relpath(path)}: " +
              ", ".join(f"{op} {c}" for op, c in sorted(hist.items())))
        if args.nodes:
            for node in graph.node:
                print("   ", describe(node))


if __name__ == "__main__":
    main()
