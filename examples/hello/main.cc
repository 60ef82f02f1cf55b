// Loads an ONNX model, runs it once on zero-filled inputs and prints each output's shape.
#include <cstdio>

#include "attune/attune.h"

int main(int argc, char** argv) {
  if (argc != 2) return std::fprintf(stderr, "usage: hello MODEL.onnx\n"), 2;
  auto session = attune::Session::Create(argv[1]);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().ToString().c_str()), 1;

  attune::NamedTensors inputs;
  for (const attune::TensorInfo& info : (*session)->inputs()) {
    std::vector<int64_t> shape = info.shape;
    for (int64_t& dim : shape) dim = dim < 0 ? 2 : dim;  // symbolic dims such as "batch": pick 2
    auto tensor = attune::Tensor::Create(info.type, shape);
    if (!tensor.ok()) return std::fprintf(stderr, "%s\n", tensor.status().ToString().c_str()), 1;
    inputs.emplace_back(info.name, *tensor);
  }
  auto outputs = (*session)->Run(inputs);
  if (!outputs.ok()) return std::fprintf(stderr, "%s\n", outputs.status().ToString().c_str()), 1;
  for (const auto& [name, tensor] : *outputs) std::printf("%s: %s\n", name.c_str(), tensor.DebugString().c_str());
}
