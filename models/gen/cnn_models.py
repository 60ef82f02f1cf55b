"""Exports torchvision's ResNet-50 and MobileNetV3-Large with random weights to ONNX.

usage: /usr/bin/python3 models/gen/cnn_models.py OUT_DIR [--small] [--batch N]

Writes OUT_DIR/{resnet50,mobilenet_v3}/model.onnx and inputs/input.npy. The full models (224x224,
torchvision's widths) are for bench/compare_cnn.sh; --small writes reduced versions (ResNet-50's
structure with one bottleneck block per stage at a quarter of its planes on 32x32 inputs,
MobileNetV3 at width 0.25 on 48x48) whose files stay small enough to commit as test fixtures. Running statistics of the
BatchNorms are randomised so that folding them is exercised. Deterministic: fixed seeds, one
torch thread.
"""
import argparse
import os

import numpy as np
import torch
import torchvision


def randomise_norms(model, rng):
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            c = m.num_features
            m.running_mean.copy_(torch.from_numpy(rng.normal(0, 0.1, c).astype(np.float32)))
            m.running_var.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, c).astype(np.float32)))
            m.weight.data.copy_(torch.from_numpy(rng.uniform(0.5, 1.5, c).astype(np.float32)))
            m.bias.data.copy_(torch.from_numpy(rng.normal(0, 0.1, c).astype(np.float32)))


class SmallBottleneckResNet(torch.nn.Module):
    """ResNet-50's structure (7x7 stem, max pool, bottleneck stages with projection shortcuts,
    global average pool, Linear) with one block per stage and planes 8, 16, 32, 64."""

    def __init__(self, num_classes=10):
        super().__init__()
        bottleneck = torchvision.models.resnet.Bottleneck
        self.stem = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 7, 2, 3, bias=False), torch.nn.BatchNorm2d(16),
                                        torch.nn.ReLU(inplace=True), torch.nn.MaxPool2d(3, 2, 1))
        blocks, inplanes = [], 16
        for i, planes in enumerate((8, 16, 32, 64)):
            stride = 1 if i == 0 else 2
            down = torch.nn.Sequential(torch.nn.Conv2d(inplanes, planes * 4, 1, stride, bias=False),
                                       torch.nn.BatchNorm2d(planes * 4))
            blocks.append(bottleneck(inplanes, planes, stride, down))
            inplanes = planes * 4
        self.blocks = torch.nn.Sequential(*blocks)
        self.pool = torch.nn.AdaptiveAvgPool2d(1)
        self.fc = torch.nn.Linear(inplanes, num_classes)

    def forward(self, x):
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


def build(kind, small):
    if kind == "resnet50":
        if small:
            model = SmallBottleneckResNet()
        else:
            model = torchvision.models.resnet50()
        return model, (32 if small else 224)
    if small:
        model = torchvision.models.mobilenet_v3_large(width_mult=0.25, num_classes=10)
    else:
        model = torchvision.models.mobilenet_v3_large()
    return model, (48 if small else 224)


def export(kind, out_dir, small, batch):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    model, size = build(kind, small)
    randomise_norms(model, rng)
    model.eval()
    x = rng.standard_normal((batch, 3, size, size)).astype(np.float32)
    folder = os.path.join(out_dir, kind)
    os.makedirs(os.path.join(folder, "inputs"), exist_ok=True)
    np.save(os.path.join(folder, "inputs", "input.npy"), x)
    with torch.no_grad():
        # PRESERVE keeps the BatchNormalization nodes (EVAL folds them into the Convs, as other
        # exporters do not), so that the engine's own folding is what runs.
        torch.onnx.export(model, torch.from_numpy(x), os.path.join(folder, "model.onnx"), opset_version=17,
                          input_names=["input"], output_names=["logits"], do_constant_folding=True,
                          training=torch.onnx.TrainingMode.PRESERVE)
    print(folder)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for kind in ("resnet50", "mobilenet_v3"):
        export(kind, args.out_dir, args.small, args.batch)


if __name__ == "__main__":
    main()
