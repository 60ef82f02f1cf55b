"""A tiny model whose weights live in an external data file (tests the importer's loader)."""
import onnx
from torch import nn

from spec import xy_spec


def save_external(model, path):
    onnx.save_model(model, path, save_as_external_data=True, all_tensors_to_one_file=True,
                    location="weights.bin", size_threshold=0)


SPEC = xy_spec("external_data",
               "No attention: y = x·W + b (one Linear 64 -> 64 exported as MatMul + Add). All "
               "initializers (W 64x64, b 64) are stored in weights.bin beside model.onnx "
               "(external data, one file, size_threshold 0).",
               lambda: nn.Linear(64, 64), 64, 7, [], 0, seed=41,
               save_model=save_external)
