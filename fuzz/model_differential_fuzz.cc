// Fused against unfused on mutated attention models. The first byte picks a
// model from models/, the next bytes edit it (graph_mutator.h) and pick the
// run's dims; the edited graph is exported and loaded twice through the public
// API, with fusions and without (SessionOptions::fuse, the CLI's --no-fuse),
// and both run on the same inputs. A finding (abort):
//   - the fused session loads or runs where the unfused one refuses: fusion
//     must not make a bad model look good;
//   - the unfused one runs and the fused one fails (except ResourceExhausted);
//   - outputs that differ in count, type, shape, NaN-ness or value beyond
//     1e-3 + 1e-3·|unfused|, also when one input element is NaN or infinite;
//     in a graph that computes in float16 or bfloat16, beyond that plus two
//     units of the 16-bit type at the output's largest |unfused| value (the
//     rounding contract of docs/fusion-forms.md: the unfused graph rounds
//     every step to the type, the fused op computes in float32 and rounds
//     once, as tests/models/golden_test.cc allows the precision_* models);
//   - any error that breaks fuzz_check.h.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "attune/session.h"
#include "fuzz/byte_reader.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/graph_mutator.h"
#include "fuzz/model_inputs.h"
#include "importer/onnx_exporter.h"
#include "importer/onnx_importer.h"

namespace attune::fuzz {
namespace {

// Small attention models covering the fusion's variants (mask forms, scale
// forms, GQA, windows, runtime masks) and two it must refuse.
constexpr const char* kModels[] = {
    "single_head",          "causal_single_head",       "mha_causal",           "mha_causal_op13",
    "mha_gqa",              "mha_additive_mask",        "mha_window8",          "mha_tril_runtime",
    "mha_shape_scale",      "mha_sqrt_scale_both",      "mha_scale_on_q",       "mha_k_pretransposed",
    "mha_neg1e4_fill",      "mha_padding_input", "negative/softmax_wrong_axis",
};

// The mantissa bits of the narrowest float type any node of `graph` computes
// in: 7 for bfloat16, 10 for float16, 0 when it computes in float32 or wider.
int NarrowestMantissaBits(const Graph& graph) {
  int bits = 0;
  for (const Node* n : graph.nodes())
    for (const Value* v : n->outputs()) {
      if (v == nullptr) continue;
      if (v->type() == ElementType::kBFloat16) return 7;
      if (v->type() == ElementType::kFloat16) bits = 10;
    }
  return bits;
}

std::vector<std::unique_ptr<Graph>>& BaseModels() {
  static std::vector<std::unique_ptr<Graph>>* models = [] {
    auto* loaded = new std::vector<std::unique_ptr<Graph>>();
    for (const char* name : kModels) {
      const std::string path = absl::StrCat(ATTUNE_SOURCE_DIR, "/models/", name, "/model.onnx");
      absl::StatusOr<std::unique_ptr<Graph>> graph = ImportModelFromFile(path);
      if (!graph.ok()) Fail(absl::StrCat("cannot load the base model ", path, ": ", graph.status().ToString()));
      loaded->push_back(*std::move(graph));
    }
    return loaded;
  }();
  return *models;
}

SessionOptions Options(bool fuse) {
  SessionOptions options;
  options.threads = 1;
  options.fuse = fuse;
  options.max_tensor_bytes = int64_t{16} << 20;
  options.log_severity = LogSeverity::kOff;
  return options;
}

void CompareOutputs(const NamedTensors& fused, const NamedTensors& unfused, int mantissa_bits) {
  if (fused.size() != unfused.size()) Fail("fused and unfused runs return different output counts");
  for (size_t o = 0; o < fused.size(); ++o) {
    const Tensor& a = fused[o].second;
    const Tensor& b = unfused[o].second;
    if (a.type() != b.type() || a.shape() != b.shape())
      Fail(absl::StrCat("output ", o, ": fused ", a.DebugString(), ", unfused ", b.DebugString()));
    if (a.type() != ElementType::kFloat32) continue;
    const auto x = a.values<float>();
    const auto y = b.values<float>();
    // Two units of the 16-bit type at the largest finite |y|: how far one
    // rounding of the result may be from the subgraph's rounding of each step.
    double rounding = 0.0;
    if (mantissa_bits > 0) {
      double largest = 1e-3;
      for (float v : y)
        if (std::isfinite(v)) largest = std::max(largest, std::fabs(static_cast<double>(v)));
      rounding = 2 * std::ldexp(1.0, static_cast<int>(std::floor(std::log2(largest))) - mantissa_bits);
    }
    for (size_t i = 0; i < x.size(); ++i) {
      if (std::isnan(x[i]) && std::isnan(y[i])) continue;
      if (x[i] == y[i]) continue;  // equal infinities
      const double diff = std::fabs(static_cast<double>(x[i]) - y[i]);
      if (!(diff <= 1e-3 + 1e-3 * std::fabs(static_cast<double>(y[i])) + rounding))
        Fail(absl::StrCat("output ", o, " element ", i, ": fused ", x[i], ", unfused ", y[i]));
    }
  }
}

}  // namespace
}  // namespace attune::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace attune;
  using namespace attune::fuzz;
  ByteReader reader(data, size);
  const auto& models = BaseModels();
  std::unique_ptr<Graph> graph = models[reader.Byte() % models.size()]->Clone();
  MutateGraph(*graph, reader);
  absl::StatusOr<std::string> bytes = ExportModelToBytes(*graph);
  if (!bytes.ok()) {
    CheckError(bytes.status(), "ExportModelToBytes");
    return 0;
  }
  absl::StatusOr<std::unique_ptr<Session>> unfused = Session::CreateFromBytes(*bytes, Options(false));
  absl::StatusOr<std::unique_ptr<Session>> fused = Session::CreateFromBytes(*bytes, Options(true));
  if (!unfused.ok()) CheckError(unfused.status(), "CreateFromBytes (unfused)");
  if (!fused.ok()) CheckError(fused.status(), "CreateFromBytes (fused)");
  if (!unfused.ok() && fused.ok())
    Fail("the fused session loads a model the unfused one refuses: " + unfused.status().ToString());
  if (!unfused.ok()) return 0;
  if (!fused.ok()) {
    if (fused.status().code() == absl::StatusCode::kResourceExhausted) return 0;
    Fail("the fused session refuses a model the unfused one loads: " + fused.status().ToString());
  }
  // Dims 1..16, sometimes beyond the models' 64-long mask buffers.
  const uint8_t dim_seed = reader.Byte();
  int calls = 0;
  auto choose = [&](const std::string&) -> int64_t {
    const uint8_t b = reader.Byte() ^ static_cast<uint8_t>(dim_seed + 37 * calls++);
    return b < 240 ? 1 + b % 16 : 60 + b % 8;
  };
  std::optional<NamedTensors> inputs = MakeInputs(**unfused, choose, reader.U32());
  if (!inputs) return 0;
  // Sometimes one element of one float input is NaN, +inf or -inf: the fused
  // op must give NaN, infinities and finite values where the subgraph does.
  if (const uint8_t special = reader.Byte(); special < 96) {
    std::vector<Tensor*> floats;
    for (auto& [name, tensor] : *inputs)
      if (tensor.type() == ElementType::kFloat32 && tensor.num_elements() > 0) floats.push_back(&tensor);
    if (!floats.empty()) {
      Tensor& t = *floats[special % floats.size()];
      const float values[] = {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                              -std::numeric_limits<float>::infinity()};
      t.data<float>()[reader.U32() % static_cast<uint32_t>(t.num_elements())] = values[special % 3];
    }
  }
  absl::StatusOr<NamedTensors> want = (*unfused)->Run(*inputs);
  absl::StatusOr<NamedTensors> got = (*fused)->Run(*inputs);
  if (!want.ok()) CheckError(want.status(), "Run (unfused)");
  if (!got.ok()) CheckError(got.status(), "Run (fused)");
  if (!want.ok() && got.ok()) Fail("the fused run succeeds where the unfused one fails: " + want.status().ToString());
  if (!want.ok()) return 0;
  if (!got.ok()) {
    if (got.status().code() == absl::StatusCode::kResourceExhausted) return 0;
    Fail("the fused run fails where the unfused one succeeds: " + got.status().ToString());
  }
  CompareOutputs(*got, *want, NarrowestMantissaBits(*graph));
  return 0;
}
