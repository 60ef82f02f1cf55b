#!/usr/bin/python3
"""Regenerate every committed model under models/ deterministically.

usage: /usr/bin/python3 models/gen/generate.py [--out MODELS_DIR] [NAME ...]
Each model folder is deleted and rewritten: model.onnx, inputs/, outputs/, model.json.
"""
import argparse
import os
import shutil
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import catalog_attention  # noqa: E402
import catalog_bias  # noqa: E402
import catalog_external  # noqa: E402
import catalog_forms  # noqa: E402
import catalog_gpt  # noqa: E402
import catalog_hf  # noqa: E402
import catalog_libraries  # noqa: E402
import catalog_masking  # noqa: E402
import catalog_merged  # noqa: E402
import catalog_negative  # noqa: E402
import catalog_ort  # noqa: E402
import catalog_precision  # noqa: E402
import catalog_sdpa  # noqa: E402
import catalog_sinks  # noqa: E402
import catalog_torch_modules  # noqa: E402
import catalog_window  # noqa: E402
from export import torch_export, torch_outputs, write_folder  # noqa: E402
from spec import GraphSpec  # noqa: E402

ALL = (catalog_attention.SPECS + catalog_gpt.SPECS + catalog_hf.SPECS + catalog_negative.SPECS
       + [catalog_external.SPEC] + catalog_forms.SPECS + catalog_window.SPECS + catalog_ort.SPECS
       + catalog_sdpa.SPECS + catalog_merged.SPECS + catalog_precision.SPECS
       + catalog_bias.SPECS + catalog_masking.SPECS + catalog_libraries.SPECS
       + catalog_torch_modules.SPECS + catalog_sinks.SPECS)


def generate_graph(spec, models_dir):
    model = spec.build_graph()
    inputs = spec.make_inputs(np.random.RandomState(1000 + spec.seed))
    outputs = spec.reference(model, inputs)
    meta = {"name": spec.name.split("/")[-1], "description": spec.description, "written_by": "onnx.helper",
            "attention_blocks": spec.attention_blocks,
            "expected_fusions": spec.expected_fusions, **spec.extra}
    folder = os.path.join(models_dir, spec.name)
    shutil.rmtree(folder, ignore_errors=True)
    write_folder(folder, model, inputs, outputs, meta, strict_check=spec.strict_check)


def generate(spec, models_dir):
    if isinstance(spec, GraphSpec):
        generate_graph(spec, models_dir)
        return
    if spec.write:
        folder = os.path.join(models_dir, spec.name)
        shutil.rmtree(folder, ignore_errors=True)
        spec.write(spec, folder)
        return
    torch.manual_seed(spec.seed)
    module = spec.build().eval()
    inputs = spec.make_inputs(module, np.random.RandomState(1000 + spec.seed))
    outputs = torch_outputs(module, inputs, spec.input_names, spec.output_names)
    model = torch_export(module, inputs, spec.input_names, spec.output_names,
                         spec.dynamic_axes, spec.opset)
    meta = {"name": spec.name.split("/")[-1], "description": spec.description,
            "attention_blocks": spec.attention_blocks,
            "expected_fusions": spec.expected_fusions, **spec.extra}
    folder = os.path.join(models_dir, spec.name)
    shutil.rmtree(folder, ignore_errors=True)
    write_folder(folder, model, inputs, outputs, meta, spec.save_model)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.dirname(here), help="models directory")
    ap.add_argument("names", nargs="*", help="only these models (default: all)")
    args = ap.parse_args()
    torch.set_num_threads(1)          # same float results on any machine
    unknown = set(args.names) - {s.name for s in ALL}
    if unknown:
        ap.error(f"unknown model(s): {', '.join(sorted(unknown))}")
    for spec in ALL:
        if not args.names or spec.name in args.names:
            generate(spec, args.out)
            print(f"wrote {spec.name}")


if __name__ == "__main__":
    main()
