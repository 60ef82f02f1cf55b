// Helpers of the op fusion tests: one-input graphs of a chain written as an
// exporter writes it, the pipeline run fused or not, inputs that include
// large values, NaN and infinities, and a comparison that says where the
// fused and the unfused graph part.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "engine/exec/plan_evaluator.h"
#include "engine/passes/pass_manager.h"
#include "gtest/gtest.h"
#include "ops/registry.h"
#include "tests/common/graph_builder.h"

namespace attune::testing {

/// A scalar constant (rank 0) of a float type.
inline Value* ScalarConstant(GraphBuilder& b, ElementType type, double v) {
  static int counter = 0;
  const std::string name = absl::StrCat("c", ++counter);
  switch (type) {
    case ElementType::kFloat16: return b.Constant(name, Tensor::Scalar<Float16>(FloatToHalf(static_cast<float>(v))));
    case ElementType::kFloat64: return b.Constant(name, Tensor::Scalar<double>(v));
    default: return b.Constant(name, Tensor::Scalar<float>(static_cast<float>(v)));
  }
}

inline constexpr double kSqrt2OverPi = 0.7978845608028654;
inline constexpr double kCubic = 0.044715;

/// 0.5 * x * (1.0 + tanh(sqrt(2/pi) * (x + 0.044715 * pow(x, 3.0)))), as torch exports HF gelu_new.
inline Value* GeluNew(GraphBuilder& b, Value* x, ElementType t, double cubic = kCubic) {
  Value* half_x = b.Node("Mul", {x, ScalarConstant(b, t, 0.5)});
  Value* cube = b.Node("Pow", {x, ScalarConstant(b, t, 3.0)});
  Value* inner = b.Node("Add", {x, b.Node("Mul", {cube, ScalarConstant(b, t, cubic)})});
  Value* tanh = b.Node("Tanh", {b.Node("Mul", {inner, ScalarConstant(b, t, kSqrt2OverPi)})});
  return b.Node("Mul", {half_x, b.Node("Add", {tanh, ScalarConstant(b, t, 1.0)})});
}

/// Writes a chain on x into b and returns its output.
using ChainBuilder = std::function<Value*(GraphBuilder& b, Value* x, ElementType type)>;

/// x [batch, seq, features] -> chain -> y, as a graph.
inline std::unique_ptr<Graph> ChainGraph(const ChainBuilder& chain, ElementType type, int opset = 17,
                                         int64_t features = 8) {
  GraphBuilder b(opset);
  Value* x = b.Input("x", type, Dims({"batch", "seq", features}));
  b.Output(chain(b, x, type));
  return b.Build();
}

struct OptimisedChain {
  std::unique_ptr<Graph> graph;
  FusionReport report;
  absl::Status status;
};

/// The default pipeline on `graph`, fused or not, without the element-wise
/// chain fusion; `edit` may disable more passes.
inline OptimisedChain OptimiseChain(std::unique_ptr<Graph> graph, bool fuse, bool verify = false,
                                    const std::function<void(PassManager&)>& edit = nullptr) {
  OptimisedChain r;
  r.graph = std::move(graph);
  PassContext context;
  context.registry = &DefaultKernelRegistry();
  context.evaluator = &DefaultSubgraphEvaluator();
  context.report = &r.report;
  context.verify_fusion = verify;
  std::unique_ptr<PassManager> pipeline = DefaultPipeline(fuse);
  // The rules alone: what they leave (a near miss) would become an element-wise
  // chain, whose own tests are elementwise_chain_fusion_test.cc.
  if (fuse) EXPECT_TRUE(pipeline->Disable("elementwise_chain_fusion").ok());
  if (edit) edit(*pipeline);
  r.status = pipeline->Run(*r.graph, context);
  return r;
}

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Values for an activation: a grid over [-20, 20], random normal ones,
/// zeros of both signs, tiny and huge magnitudes, NaN and both infinities;
/// `largest` is the type's largest finite value (included with sign).
inline std::vector<float> ActivationInputs(float largest) {
  std::vector<float> v;
  for (int i = -2000; i <= 2000; ++i) v.push_back(static_cast<float>(i) * 0.01f);
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 3.0f);
  for (int i = 0; i < 1000; ++i) v.push_back(normal(rng));
  for (float e : {0.0f, 1e-30f, 1e-4f, 0.5f, 5.5f, 9.0f, 40.0f, 1e4f, 1e13f, 1e19f, 1e30f, largest / 4, largest,
                  kInf, kNaN})
    for (float s : {1.0f, -1.0f}) v.push_back(s * e);
  return v;
}

/// `values` as a [1, n / features, features] tensor of `type` (padded with zeros).
inline Tensor ChainInput(const std::vector<float>& values, ElementType type, int64_t features = 8) {
  const int64_t rows = (static_cast<int64_t>(values.size()) + features - 1) / features;
  Tensor t = *Tensor::Create(type, {1, rows, features});
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    const float v = i < static_cast<int64_t>(values.size()) ? values[i] : 0.0f;
    if (type == ElementType::kFloat16) t.data<Float16>()[i] = FloatToHalf(v);
    else if (type == ElementType::kFloat64) t.data<double>()[i] = v;
    else t.data<float>()[i] = v;
  }
  return t;
}

inline double ElementOf(const Tensor& t, int64_t i) {
  switch (t.type()) {
    case ElementType::kFloat16: return HalfToFloat(t.data<Float16>()[i]);
    case ElementType::kFloat64: return t.data<double>()[i];
    default: return t.data<float>()[i];
  }
}

/// Where two runs part: NaN against a number, infinities of another sign or
/// against a finite value, finite values further apart than
/// `tolerance` · max(1, |unfused|). `allowed` may excuse an element (a
/// documented difference), given its input, unfused and fused values.
struct Divergence {
  int64_t count = 0;
  std::string first;
  double max_error = 0;  // largest |fused - unfused| / max(1, |unfused|) over finite pairs
};
inline Divergence Diverge(const Tensor& input, const Tensor& unfused, const Tensor& fused, double tolerance,
                          const std::function<bool(double x, double u, double f)>& allowed = nullptr) {
  Divergence d;
  for (int64_t i = 0; i < unfused.num_elements(); ++i) {
    const double x = ElementOf(input, i), u = ElementOf(unfused, i), f = ElementOf(fused, i);
    bool same;
    if (std::isnan(u) || std::isnan(f)) same = std::isnan(u) && std::isnan(f);
    else if (std::isinf(u) || std::isinf(f)) same = u == f;
    else {
      const double error = std::fabs(u - f) / std::max(1.0, std::fabs(u));
      d.max_error = std::max(d.max_error, error);
      same = error <= tolerance;
    }
    if (same || (allowed && allowed(x, u, f))) continue;
    if (d.count++ == 0) d.first = absl::StrCat("x = ", x, ": unfused ", u, ", fused ", f);
  }
  return d;
}

}  // namespace attune::testing
