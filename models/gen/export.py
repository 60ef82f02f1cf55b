"""Export a torch module to a clean, deterministic ONNX model and write a model folder:
model.onnx, inputs/<name>.npy, outputs/<name>.npy, model.json."""
import io
import json
import os
import re
import warnings

import numpy as np
import onnx
import onnx.mapping
import torch


def torch_export(module, inputs, input_names, output_names, dynamic_axes, opset):
    """Trace-export `module` (eval mode) on numpy `inputs`; returns an onnx.ModelProto."""
    args = tuple(torch.from_numpy(inputs[n]) for n in input_names)
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, buf, input_names=input_names,
                          output_names=output_names, dynamic_axes=dynamic_axes,
                          opset_version=opset, do_constant_folding=True,
                          training=torch.onnx.TrainingMode.EVAL)
    return strip_doc_strings(onnx.load_from_string(buf.getvalue()))


def strip_doc_strings(model):
    """Remove doc strings (they may carry source locations) so the bytes are reproducible."""
    model.doc_string = ""
    model.graph.doc_string = ""
    for node in model.graph.node:
        node.doc_string = ""
    return model


def torch_outputs(module, inputs, input_names, output_names):
    """Run the module in float32 eval mode; returns {output name: numpy array}."""
    with torch.no_grad():
        result = module(*(torch.from_numpy(inputs[n]) for n in input_names))
    if isinstance(result, torch.Tensor):
        result = (result,)
    out = {name: t.detach().numpy().astype(np.float32) for name, t in zip(output_names, result)}
    for name, arr in out.items():
        if not np.isfinite(arr).all():
            raise ValueError(f"output {name} is not finite")
    return out


def value_info_json(values, samples):
    """{name: {dtype, shape (declared: ints or symbol names), sample_shape}}."""
    info = {}
    for v in values:
        t = v.type.tensor_type
        dims = [d.dim_param if d.dim_param else d.dim_value for d in t.shape.dim]
        dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[t.elem_type].name
        info[v.name] = {"dtype": dtype, "shape": dims,
                        "sample_shape": list(samples[v.name].shape)}
    return info


def save_npys(folder, arrays):
    os.makedirs(folder, exist_ok=True)
    for name, arr in arrays.items():
        np.save(os.path.join(folder, f"{name}.npy"), np.ascontiguousarray(arr))


def write_folder(folder, model, inputs, outputs, meta, save_model=None, strict_check=True):
    """Check the model and write the whole folder. `meta` fills the rest of model.json.
    `save_model(model, path)` overrides how model.onnx is written (external data).
    `strict_check=False` skips the checker, for graphs with an op below its ONNX opset as ONNX
    Runtime accepts them (LayerNormalization at opset 16)."""
    if strict_check:
        onnx.checker.check_model(model, full_check=True)   # full: strict type/shape inference
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "model.onnx")
    if save_model:
        save_model(model, path)
    else:
        onnx.save_model(model, path)
    save_npys(os.path.join(folder, "inputs"), inputs)
    save_npys(os.path.join(folder, "outputs"), outputs)
    opset = next(o.version for o in model.opset_import if o.domain in ("", "ai.onnx"))
    doc = {"name": meta["name"], "description": meta["description"], "opset": opset,
           "inputs": value_info_json(model.graph.input, inputs),
           "outputs": value_info_json(model.graph.output, outputs)}
    doc.update({k: v for k, v in meta.items() if k not in doc})
    with open(os.path.join(folder, "model.json"), "w") as f:
        f.write(compact_json(doc) + "\n")


def compact_json(doc):
    """Indented JSON with short lists of numbers/strings kept on one line."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    return re.sub(r"\[\s+([^\[\]{}]*?)\s+\]",
                  lambda m: "[" + ", ".join(p.strip() for p in m.group(1).split(",\n")) + "]",
                  text)
